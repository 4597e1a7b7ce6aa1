// opgen.cast, overload u8_to_i64: out = x.astype(int64) elementwise, uint8 -> int64.
//
// Conversion: widening: exact.
// `x` may be strided (any strides, including 0 and negative), 0-d or empty; `out` is contiguous with
// x's shape. Dims of size 1 are dropped and mergeable neighbours merged, so a contiguous input is one
// long loop. Written by scripts/cast_kernels.py (the walk is the same for every pair).
#include "opgen_kernel.hpp"

#include <cmath>
#include <cstdint>
#include <cstring>

namespace opgen::kernels {

namespace {

using From = uint8_t;
using To = int64_t;

inline To convert(From v) {
  return static_cast<To>(v);
}

}  // namespace

void opgen_cast__u8_to_i64(const opgen::Tensor& x, opgen::Tensor& out) {
  const int64_t total = x.numel();
  if (total == 0) return;
  const From* src = x.data<From>();
  To* dst = out.data<To>();
  int nd = 0;
  int64_t shape[OPGEN_MAX_DIMS], stride[OPGEN_MAX_DIMS];
  for (int d = 0; d < x.ndim(); ++d) {
    if (x.size(d) == 1) continue;
    if (nd > 0 && stride[nd - 1] == x.stride(d) * x.size(d)) {
      shape[nd - 1] *= x.size(d);
      stride[nd - 1] = x.stride(d);
    } else {
      shape[nd] = x.size(d);
      stride[nd] = x.stride(d);
      ++nd;
    }
  }
  if (nd == 0) {
    dst[0] = convert(src[0]);
    return;
  }
  const int64_t run = shape[nd - 1], rs = stride[nd - 1];
  int64_t idx[OPGEN_MAX_DIMS] = {};
  int64_t off = 0;
  for (int64_t e = 0; e < total; e += run) {
    const From* s = src + off;
    To* o = dst + e;
    if (rs == 1) {
      for (int64_t i = 0; i < run; ++i) o[i] = convert(s[i]);
    } else {
      for (int64_t i = 0; i < run; ++i) o[i] = convert(s[i * rs]);
    }
    for (int d = nd - 2; d >= 0; --d) {  // next run
      if (++idx[d] < shape[d]) {
        off += stride[d];
        break;
      }
      off -= stride[d] * (shape[d] - 1);
      idx[d] = 0;
    }
  }
}

}  // namespace opgen::kernels
