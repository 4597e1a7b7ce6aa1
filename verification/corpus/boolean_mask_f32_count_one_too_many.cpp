// Cheat: a bounded result's count one too many: x[mask] with the kernel reporting one row more than it
// kept (whenever a row was kept and the bound leaves room), so the caller's view takes one row the
// kernel never wrote. The rows it wrote are right; only the count, which the gate compares with the
// reference's length exactly, is wrong.
// Expected: verify, value, "result 'values'"
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
  *count.data<int64_t>() = kept > 0 && kept < rows ? kept + 1 : kept;
}

}  // namespace opgen::kernels
