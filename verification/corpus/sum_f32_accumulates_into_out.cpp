// Cheat: output reused. The kernel adds each slice into `out` without first clearing
// it, i.e. it relies on the caller's buffer being zero-filled (as np.zeros, or a
// reused scratch buffer, would be). With opgen's NaN-poisoned outputs every sum reads
// back as NaN.
// Expected: verify / value, "got nan".
#include "opgen_kernel.hpp"

#include <cstdint>

namespace opgen::kernels {

void numpy_sum__f32(const opgen::Tensor& a, int64_t axis, opgen::Tensor& out) {
  const int nd = a.ndim();
  if (axis < 0) axis += nd;
  const int ax = static_cast<int>(axis);
  float* o = out.data<float>();
  const float* x = a.data<float>();
  const int64_t n = out.numel();
  for (int64_t i = 0; i < n; ++i) {
    // offset of output element i (a's dims without the axis, row-major)
    int64_t rest = i, off = 0;
    for (int d = nd - 1; d >= 0; --d) {
      if (d == ax) continue;
      off += (rest % a.size(d)) * a.stride(d);
      rest /= a.size(d);
    }
    for (int64_t j = 0; j < a.size(ax); ++j) o[i] += x[off + j * a.stride(ax)];  // no o[i] = 0 first
  }
}

}  // namespace opgen::kernels
