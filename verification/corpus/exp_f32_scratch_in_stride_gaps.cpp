// Cheat: scribbling into the gaps of a strided input. When the input is a stride-2 view (every
// stride even), the elements between its elements "belong to nobody", so the kernel keeps each
// result there first (a staging buffer for free) and copies it out afterwards. In production
// those gaps are another tensor's data (the other half of an interleaved complex array, the
// other columns of a matrix). The old executor sent back only the view's own elements, so no
// write into a gap was ever seen. opgen lays every input out inside a larger buffer whose gaps
// and margins hold a sentinel, sends the whole buffer back and compares it byte for byte.
// Expected: verify / input_modified, "in a gap between its elements".
#include "opgen_kernel.hpp"

#include <cmath>
#include <cstdint>

namespace opgen::kernels {

void numpy_exp__f32(const opgen::Tensor& x, opgen::Tensor& out) {
  const int nd = x.ndim();
  float* xp = const_cast<float*>(x.data<float>());
  float* o = out.data<float>();
  const int64_t n = out.numel();
  // Every stride even and the innermost 2: the odd slots are no element of the view (a transpose,
  // whose neighbours are elements, would be caught by any harness).
  bool gaps = nd > 0 && x.stride(nd - 1) == 2;
  for (int d = 0; d < nd; ++d) gaps = gaps && x.stride(d) % 2 == 0;
  for (int64_t i = 0; i < n; ++i) {
    int64_t rest = i, off = 0;
    for (int d = nd - 1; d >= 0; --d) {
      off += (rest % x.size(d)) * x.stride(d);
      rest /= x.size(d);
    }
    if (gaps) {
      xp[off + 1] = std::exp(xp[off]);  // the gap after this element: staging
      o[i] = xp[off + 1];
    } else {
      o[i] = std::exp(xp[off]);
    }
  }
}

}  // namespace opgen::kernels
