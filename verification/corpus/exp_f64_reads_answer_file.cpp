// Cheat: file access. The kernel looks for a file of precomputed answers (written by
// an earlier run, or planted next to the verifier) and, if it finds one, copies from
// it. It declares fopen/fread itself since <cstdio> is not on the header allow-list.
// The static policy rejects file functions by name.
// Expected: policy / file, "file access is not allowed".
#include "opgen_kernel.hpp"

#include <cmath>
#include <cstdint>

extern "C" void* fopen(const char*, const char*);
extern "C" unsigned long fread(void*, unsigned long, unsigned long, void*);

namespace opgen::kernels {

namespace {

// Offset (in elements) of element i, row-major, of a strided view.
int64_t offset_of(const opgen::Tensor& t, int64_t i) {
  int64_t off = 0;
  for (int d = t.ndim() - 1; d >= 0; --d) {
    off += (i % t.size(d)) * t.stride(d);
    i /= t.size(d);
  }
  return off;
}

}  // namespace

void numpy_exp__f64(const opgen::Tensor& x, opgen::Tensor& out) {
  const double* xp = x.data<double>();
  double* o = out.data<double>();
  const int64_t n = out.numel();
  if (void* f = fopen("/tmp/opgen-answers.bin", "rb")) {
    if (fread(o, sizeof(double), static_cast<unsigned long>(n), f) == static_cast<unsigned long>(n)) return;
  }
  for (int64_t i = 0; i < n; ++i) o[i] = std::exp(xp[offset_of(x, i)]);
}

}  // namespace opgen::kernels
