// numpy.clip, overload u8: out[i] = numpy.clip(a[i], a_min, a_max) for uint8 tensors with Python
// int bounds, exactly as NumPy 2 computes it (the result stays uint8).
//
// NumPy's _clip drops a bound outside uint8 on its own side (a_min <= 0, a_max >= 255) and
// raises OverflowError for one outside on the far side (a_min > 255, a_max < 0), whatever a
// holds. So: check the far sides first (on the int64 bounds, before any narrowing), then
// lo = max(a_min, 0), hi = min(a_max, 255), and t = x < lo ? lo : x; out = t > hi ? hi : t
// (lo > hi gives hi everywhere).
//
// `a` may be strided (any strides, including 0 and negative), 0-d or empty; `out` is contiguous
// with a's shape. Dims of size 1 are dropped and mergeable neighbours merged, so a contiguous
// input is one long loop, which GCC vectorises (a max and a min per vector).
#include "opgen_kernel.hpp"

#include <cstdint>

namespace opgen::kernels {

namespace {

using T = uint8_t;

void run(const T* __restrict x, int64_t stride, T* __restrict y, int64_t n, T lo, T hi) {
  if (stride == 1) {
    for (int64_t i = 0; i < n; ++i) {
      const T t = x[i] < lo ? lo : x[i];
      y[i] = t > hi ? hi : t;
    }
  } else {
    for (int64_t i = 0; i < n; ++i) {
      const T v = x[i * stride];
      const T t = v < lo ? lo : v;
      y[i] = t > hi ? hi : t;
    }
  }
}

}  // namespace

void numpy_clip__u8(const opgen::Tensor& a, int64_t a_min, int64_t a_max, opgen::Tensor& out) {
  if (a_min > int64_t(255)) throw opgen::Error(opgen::ErrorKind::Overflow, "Python integer a_min out of bounds for uint8");
  if (a_max < int64_t(0)) throw opgen::Error(opgen::ErrorKind::Overflow, "Python integer a_max out of bounds for uint8");
  const T lo = a_min < int64_t(0) ? T(0) : static_cast<T>(a_min);
  const T hi = a_max > int64_t(255) ? T(255) : static_cast<T>(a_max);
  const int64_t total = a.numel();
  if (total == 0) return;
  const T* src = a.data<T>();
  T* dst = out.data<T>();
  int nd = 0;
  int64_t shape[OPGEN_MAX_DIMS], stride[OPGEN_MAX_DIMS];
  for (int d = 0; d < a.ndim(); ++d) {
    if (a.size(d) == 1) continue;
    if (nd > 0 && stride[nd - 1] == a.stride(d) * a.size(d)) {
      shape[nd - 1] *= a.size(d);
      stride[nd - 1] = a.stride(d);
    } else {
      shape[nd] = a.size(d);
      stride[nd] = a.stride(d);
      ++nd;
    }
  }
  if (nd == 0) {  // 0-d, or every dim of size 1
    run(src, 1, dst, 1, lo, hi);
    return;
  }
  const int64_t len = shape[nd - 1], len_stride = stride[nd - 1];
  const int64_t runs = total / len;
  int64_t idx[OPGEN_MAX_DIMS] = {};
  int64_t off = 0;
  for (int64_t r = 0; r < runs; ++r) {
    run(src + off, len_stride, dst + r * len, len, lo, hi);
    for (int d = nd - 2; d >= 0; --d) {
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
