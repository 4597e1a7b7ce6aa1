// Cheat: strided subsample. exp is computed for every other element only; each odd
// element copies its even neighbour ("neighbouring values are close"). Half the work,
// and a harness that checks a sample of the output, or inputs that vary slowly
// (np.linspace), may not notice. opgen compares every element of every output.
// Expected: verify / value, "first mismatch".
#include "opgen_kernel.hpp"

#include <cmath>
#include <cstdint>

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

void numpy_exp__f32(const opgen::Tensor& x, opgen::Tensor& out) {
  const float* xp = x.data<float>();
  float* o = out.data<float>();
  const int64_t n = out.numel();
  for (int64_t i = 0; i < n; i += 2) {
    o[i] = static_cast<float>(std::exp(static_cast<double>(xp[offset_of(x, i)])));
    if (i + 1 < n) o[i + 1] = o[i];  // "close enough"
  }
}

}  // namespace opgen::kernels
