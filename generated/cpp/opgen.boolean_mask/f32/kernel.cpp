// opgen.boolean_mask, overload f32: (values, count) = (x[mask], len(x[mask])), NumPy's boolean-mask indexing.
//
// mask covers x's first k = mask.ndim dims (the shim has checked the shapes). The rows of x are its
// elements over those dims, each a block of inner = prod(x.shape[k:]) elements; the mask is walked
// once in C order with its own strides and x's outer strides beside it, and each row whose mask
// element is true is copied to the next row of values (contiguous, allocated at the bound
// mask.numel() rows by the caller). count gets the number of rows written; nothing is written past
// it. Inner elements are walked as a table of x's offsets (a plain copy when they are contiguous).
#include "opgen_kernel.hpp"

#include <cstdint>
#include <cstring>
#include <vector>

namespace opgen::kernels {

void opgen_boolean_mask__f32(const opgen::Tensor& x, const opgen::Tensor& mask, opgen::Tensor& values,
                              opgen::Tensor& count) {
  using T = float;
  const int k = mask.ndim(), nd = x.ndim();
  int64_t inner = 1;
  for (int d = k; d < nd; ++d) inner *= x.size(d);
  // x's offsets of one row's elements, in C order; contiguous rows are copied with memcpy.
  std::vector<int64_t> inoff(static_cast<size_t>(inner), 0);
  bool contiguous = true;
  {
    int64_t at[OPGEN_MAX_DIMS] = {};
    int64_t off = 0;
    for (int64_t j = 0; j < inner; ++j) {
      inoff[static_cast<size_t>(j)] = off;
      if (off != j) contiguous = false;
      for (int d = nd - 1; d >= k; --d) {
        if (++at[d] < x.size(d)) {
          off += x.stride(d);
          break;
        }
        off -= x.stride(d) * (x.size(d) - 1);
        at[d] = 0;
      }
    }
  }
  const T* src = x.data<T>();
  const bool* m = mask.data<bool>();
  T* dst = values.data<T>();
  const int64_t rows = mask.numel();
  int64_t kept = 0;
  int64_t at[OPGEN_MAX_DIMS] = {};
  int64_t moff = 0, xoff = 0;
  for (int64_t r = 0; r < rows; ++r) {
    if (m[moff]) {
      T* row = dst + kept * inner;
      if (contiguous) {
        if (inner) std::memcpy(row, src + xoff, static_cast<size_t>(inner) * sizeof(T));
      } else {
        for (int64_t j = 0; j < inner; ++j) row[j] = src[xoff + inoff[static_cast<size_t>(j)]];
      }
      ++kept;
    }
    for (int d = k - 1; d >= 0; --d) {
      if (++at[d] < mask.size(d)) {
        moff += mask.stride(d);
        xoff += x.stride(d);
        break;
      }
      moff -= mask.stride(d) * (mask.size(d) - 1);
      xoff -= x.stride(d) * (x.size(d) - 1);
      at[d] = 0;
    }
  }
  *count.data<int64_t>() = kept;
}

}  // namespace opgen::kernels
