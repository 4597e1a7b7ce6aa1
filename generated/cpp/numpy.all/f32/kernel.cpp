// numpy.all, overload f32: numpy.all(a, axis=axis, keepdims=keepdims), a bool tensor.
//
// True where every element along the axis is nonzero, an element being nonzero when x != 0 (nan,
// inf and subnormals are nonzero; -0.0 is zero). An empty axis gives true (no error); out is
// written 1 for true and 0 for false. The result of a lane is decided by its first zero element, so
// every loop stops there. Kept dims are merged where the strides allow and walked in row-major
// order (out is contiguous in that order, with or without keepdims: a kept size-1 axis does not
// change it). Two strategies, picked from the strides: each output tests its own strided lane when
// the reduced axis moves fastest (a unit-stride lane in blocks of 64 with a branch-free,
// vectorisable inner loop, stopping after the first block that decides it); otherwise up to 256
// neighbouring outputs are tested together, one input row at a time (contiguous inner loops),
// stopping once all of them are decided (checked every 16 rows). Any strides (0, negative), 0-size
// dims.
#include "opgen_kernel.hpp"

#include <cstdint>
#include <cstdlib>

namespace opgen::kernels {

namespace {

using T = float;

// kDecided is the result a lane gets from its first element that hits; !kDecided if none does.
constexpr bool kDecided = false;
inline bool nonzero(T x) { return x != T(0); }
inline unsigned char hit(T x) { return static_cast<unsigned char>(nonzero(x) == kDecided); }

bool lane(const T* p, int64_t K, int64_t s) {
  constexpr int64_t kBlock = 64;
  int64_t k = 0;
  if (s == 1) {
    for (; k + kBlock <= K; k += kBlock) {
      unsigned char h = 0;
      for (int64_t j = 0; j < kBlock; ++j) h |= hit(p[k + j]);
      if (h) return kDecided;
    }
    for (; k < K; ++k)
      if (hit(p[k])) return kDecided;
  } else {
    for (; k < K; ++k)
      if (hit(p[k * s])) return kDecided;
  }
  return !kDecided;
}

}  // namespace

void numpy_all__f32(const opgen::Tensor& a, int64_t axis, bool keepdims, opgen::Tensor& out) {
  (void)keepdims;
  const int nd = a.ndim();
  if (axis < -nd || axis >= nd) throw opgen::Error(opgen::ErrorKind::Value, "axis out of range");
  if (axis < 0) axis += nd;
  const int64_t K = a.size(static_cast<int>(axis)), sK = a.stride(static_cast<int>(axis));
  bool* dst = out.data<bool>();
  const int64_t n_out = out.numel();
  if (n_out == 0) return;
  if (K == 0) {
    for (int64_t i = 0; i < n_out; ++i) dst[i] = !kDecided;
    return;
  }
  const T* src = a.data<T>();

  int kd = 0;
  int64_t shape[OPGEN_MAX_DIMS], stride[OPGEN_MAX_DIMS];
  for (int d = 0; d < nd; ++d) {
    if (d == axis || a.size(d) == 1) continue;
    if (kd > 0 && stride[kd - 1] == a.stride(d) * a.size(d)) {
      shape[kd - 1] *= a.size(d);
      stride[kd - 1] = a.stride(d);
    } else {
      shape[kd] = a.size(d);
      stride[kd] = a.stride(d);
      ++kd;
    }
  }
  if (kd == 0) {
    dst[0] = lane(src, K, sK);
    return;
  }
  const int64_t run = shape[kd - 1], run_stride = stride[kd - 1];
  const int64_t runs = n_out / run;
  const bool along = std::llabs(sK) <= std::llabs(run_stride);

  constexpr int64_t kCols = 256;
  unsigned char acc[kCols];
  int64_t idx[OPGEN_MAX_DIMS] = {};
  int64_t off = 0;
  for (int64_t r = 0; r < runs; ++r) {
    bool* o = dst + r * run;
    const T* base = src + off;
    if (along) {
      for (int64_t j = 0; j < run; ++j) o[j] = lane(base + j * run_stride, K, sK);
    } else {
      for (int64_t j0 = 0; j0 < run; j0 += kCols) {
        const int64_t m = run - j0 < kCols ? run - j0 : kCols;
        const T* col = base + j0 * run_stride;
        for (int64_t j = 0; j < m; ++j) acc[j] = 0;
        for (int64_t k = 0; k < K; ++k) {
          const T* row = col + k * sK;
          if (run_stride == 1) {
            for (int64_t j = 0; j < m; ++j) acc[j] |= hit(row[j]);
          } else {
            for (int64_t j = 0; j < m; ++j) acc[j] |= hit(row[j * run_stride]);
          }
          if ((k & 15) == 15) {  // every output of the block decided: the remaining rows cannot change them
            unsigned char all = 1;
            for (int64_t j = 0; j < m; ++j) all &= acc[j];
            if (all) break;
          }
        }
        for (int64_t j = 0; j < m; ++j) o[j0 + j] = acc[j] ? kDecided : !kDecided;
      }
    }
    for (int d = kd - 2; d >= 0; --d) {
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
