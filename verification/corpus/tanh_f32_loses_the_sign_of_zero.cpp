// Cheat (a bug, not malice): right to the last bit except that -0.0 comes back as 0.0. The
// kernel adds 0.0f to every result ("to flush a -0 out of the output", or an accumulator
// initialised to 0 in a fused loop), and -0.0 + 0.0 is 0.0 in round-to-nearest. By value
// the two zeros are equal, so a comparison of |got - ref| <= tol admits it; 1/x, copysign
// and atan2 downstream tell them apart, and numpy.tanh(-0.0) is -0.0. The gate compares the
// sign of every zero result (Tolerance.signed_zeros, on unless a spec says why not).
// Expected: verify / value, "the sign of zero differs".
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

void numpy_tanh__f32(const opgen::Tensor& x, opgen::Tensor& out) {
  const float* xp = x.data<float>();
  float* o = out.data<float>();
  const int64_t n = out.numel();
  for (int64_t i = 0; i < n; ++i) o[i] = std::tanh(xp[offset_of(x, i)]) + 0.0f;  // the bug: -0.0 + 0.0 = 0.0
}

}  // namespace opgen::kernels
