// opgen.assign_region, overload bool: out = x with out[region] = value (NumPy's x[region] = value on a copy of x).
//
// The region along dim d is the positions starts[d] + i*steps[d] for i in [0, value.shape[d]) (a negative
// step walks backwards); the shim has checked that value has x's rank, that no step is 0 and that every
// position lies in x, so nothing is written outside out and nothing twice. out is contiguous in C order.
// x is copied into it whole (one memcpy when x is contiguous, else row by row along its last dim through
// its strides, the leading dims walked with an odometer); then value is walked once in C order, row by row
// along its last dim with an odometer over its leading dims that carries the matching offset in out (a
// step along dim d moves out by steps[d] times out's stride there), and each row is written in a tight
// loop: a memcpy where both the region and value are contiguous along the row, a fill where value is
// broadcast along it (stride 0), else a strided copy. Elements are copied bit for bit.
#include "opgen_kernel.hpp"

#include <cstdint>
#include <cstring>
#include <vector>

namespace opgen::kernels {

void opgen_assign_region__bool(const opgen::Tensor& x, const opgen::Tensor& value, const std::vector<int64_t>& starts,
                              const std::vector<int64_t>& steps, opgen::Tensor& out) {
  using T = bool;
  const int nd = x.ndim();
  const int64_t n = out.numel();
  if (n == 0) return;
  T* dst = out.data<T>();
  if (nd == 0) {  // a 0-d x: out is value's one element
    dst[0] = value.data<T>()[0];
    return;
  }
  {  // out = x, in C order
    const T* src = x.data<T>();
    if (x.is_contiguous()) {
      std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(T));
    } else {
      const int64_t len = x.size(nd - 1), s = x.stride(nd - 1), rows = n / len;
      int64_t at[OPGEN_MAX_DIMS] = {};
      int64_t off = 0;
      for (int64_t r = 0; r < rows; ++r) {
        T* y = dst + r * len;
        const T* a = src + off;
        if (s == 1) {
          std::memcpy(y, a, static_cast<size_t>(len) * sizeof(T));
        } else {
          for (int64_t j = 0; j < len; ++j) y[j] = a[j * s];
        }
        for (int d = nd - 2; d >= 0; --d) {
          if (++at[d] < x.size(d)) {
            off += x.stride(d);
            break;
          }
          off -= x.stride(d) * (x.size(d) - 1);
          at[d] = 0;
        }
      }
    }
  }
  const int64_t m = value.numel();
  if (m == 0) return;  // a count of 0 along some dim: nothing set
  // out's C-order strides; a step of the region along dim d moves out by rstride[d]
  int64_t rstride[OPGEN_MAX_DIMS];
  int64_t base = 0, acc = 1;
  for (int d = nd - 1; d >= 0; --d) {
    rstride[d] = steps[static_cast<size_t>(d)] * acc;
    base += starts[static_cast<size_t>(d)] * acc;
    acc *= x.size(d);
  }
  const T* v = value.data<T>();
  const int64_t len = value.size(nd - 1), vs = value.stride(nd - 1), rs = rstride[nd - 1], rows = m / len;
  int64_t at[OPGEN_MAX_DIMS] = {};
  int64_t voff = 0, ooff = base;
  for (int64_t r = 0; r < rows; ++r) {
    T* y = dst + ooff;
    const T* a = v + voff;
    if (rs == 1 && vs == 1) {
      std::memcpy(y, a, static_cast<size_t>(len) * sizeof(T));
    } else if (vs == 0) {
      const T c = a[0];
      for (int64_t j = 0; j < len; ++j) y[j * rs] = c;
    } else {
      for (int64_t j = 0; j < len; ++j) y[j * rs] = a[j * vs];
    }
    for (int d = nd - 2; d >= 0; --d) {
      if (++at[d] < value.size(d)) {
        voff += value.stride(d);
        ooff += rstride[d];
        break;
      }
      voff -= value.stride(d) * (value.size(d) - 1);
      ooff -= rstride[d] * (value.size(d) - 1);
      at[d] = 0;
    }
  }
}

}  // namespace opgen::kernels
