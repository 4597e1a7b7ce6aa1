// numpy.logical_not, overload bool: out = not x elementwise on a bool tensor.
//
// Input bools are one byte holding exactly 0 or 1 (the shim checks it), so `x ^ 1` on the byte
// is the logical not and every output byte is exactly 0 or 1. `x` may be strided (any strides,
// including 0 and negative), 0-d or empty; `out` is contiguous with x's shape. Dims of size 1
// are dropped and mergeable neighbours merged, so a contiguous input is one long loop GCC
// vectorises over bytes.
#include "opgen_kernel.hpp"

#include <cstdint>

namespace opgen::kernels {

void numpy_logical_not__bool(const opgen::Tensor& x, opgen::Tensor& out) {
  const int64_t total = x.numel();
  if (total == 0) return;
  const bool* src = x.data<bool>();
  bool* dst = out.data<bool>();
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
    dst[0] = !src[0];
    return;
  }
  const int64_t run = shape[nd - 1], rs = stride[nd - 1];
  int64_t idx[OPGEN_MAX_DIMS] = {};
  int64_t off = 0;
  for (int64_t e = 0; e < total; e += run) {
    const bool* s = src + off;
    bool* o = dst + e;
    if (rs == 1) {
      for (int64_t i = 0; i < run; ++i) o[i] = s[i] ^ true;
    } else {
      for (int64_t i = 0; i < run; ++i) o[i] = !s[i * rs];
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
