// LLM bug with a crash: a scratch buffer freed twice (once in a "cleanup" helper and
// again at the end). glibc detects the double free and aborts the process. The sandbox
// reports SIGABRT and the input that caused it; the verifier survives.
// Expected: verify / crash, "SIGABRT".
#include "opgen_kernel.hpp"

#include <cmath>
#include <cstdint>
#include <cstdlib>

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

void release(double* p) { std::free(p); }

}  // namespace

void numpy_exp__f64(const opgen::Tensor& x, opgen::Tensor& out) {
  const double* xp = x.data<double>();
  double* o = out.data<double>();
  const int64_t n = out.numel();
  double* scratch = static_cast<double*>(std::malloc(sizeof(double) * static_cast<size_t>(n + 1)));
  for (int64_t i = 0; i < n; ++i) scratch[i] = std::exp(xp[offset_of(x, i)]);
  for (int64_t i = 0; i < n; ++i) o[i] = scratch[i];
  release(scratch);
  std::free(scratch);  // again
}

}  // namespace opgen::kernels
