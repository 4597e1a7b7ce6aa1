// opgen.masked_fill, overload bool: out = x with out[mask] = value (NumPy's x[mask] = value on a copy of x).
//
// mask covers x's first k = mask.ndim dims (the shim has checked the shapes, and a mask with a dim of 0
// against an x dim of 1 sets nothing). out is contiguous in C order, so the row of leading index r (in C
// order over the first k dims) is the block [r * inner, (r + 1) * inner), inner = prod(x.shape[k:]).
// x is copied whole into out (any strides, walked with an odometer), then the mask is walked once in C
// order with its own strides and every row whose element is true is filled with value, cast once to
// bool as NumPy's setitem casts the Python scalar.
#include "opgen_kernel.hpp"

#include <algorithm>
#include <cstdint>

namespace opgen::kernels {

void opgen_masked_fill__bool(const opgen::Tensor& x, const opgen::Tensor& mask, bool value, opgen::Tensor& out) {
  using T = bool;
  const int k = mask.ndim(), nd = x.ndim();
  const int64_t n = out.numel();
  if (n == 0) return;
  T* dst = out.data<T>();
  {  // out = x, in C order
    const T* src = x.data<T>();
    int64_t at[OPGEN_MAX_DIMS] = {};
    int64_t off = 0;
    for (int64_t j = 0; j < n; ++j) {
      dst[j] = src[off];
      for (int d = nd - 1; d >= 0; --d) {
        if (++at[d] < x.size(d)) {
          off += x.stride(d);
          break;
        }
        off -= x.stride(d) * (x.size(d) - 1);
        at[d] = 0;
      }
    }
  }
  const int64_t rows = mask.numel();
  if (rows == 0) return;  // an empty mask (a dim of 0 against a dim of 1) sets nothing
  int64_t inner = 1;
  for (int d = k; d < nd; ++d) inner *= x.size(d);
  const T v = static_cast<T>(value);
  const bool* m = mask.data<bool>();
  int64_t at[OPGEN_MAX_DIMS] = {};
  int64_t moff = 0;
  for (int64_t r = 0; r < rows; ++r) {
    if (m[moff]) std::fill(dst + r * inner, dst + (r + 1) * inner, v);
    for (int d = k - 1; d >= 0; --d) {
      if (++at[d] < mask.size(d)) {
        moff += mask.stride(d);
        break;
      }
      moff -= mask.stride(d) * (mask.size(d) - 1);
      at[d] = 0;
    }
  }
}

}  // namespace opgen::kernels
