// numpy.argmin, overload f32: numpy.argmin(a, axis=axis, keepdims=keepdims) as int64.
//
// The index of the first smallest element along the axis (ties pick the first: only a strictly
// smaller element moves it; 0.0 and -0.0 tie); the first nan wins over everything and stops
// the search. An empty axis raises ValueError, even if out is empty.
// Kept dims are merged where the strides allow and walked in row-major order (out is
// contiguous in that order, with or without keepdims: a kept size-1 axis does not change it).
// Two strategies, picked from the strides: each output reduces its own strided lane when the
// reduced axis moves fastest; otherwise up to 256 neighbouring outputs are reduced together,
// one input row at a time (contiguous, vectorisable inner loops). Any strides (0, negative),
// 0-size dims.
#include "opgen_kernel.hpp"

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>

namespace opgen::kernels {

namespace {

using T = float;
using R = int64_t;

constexpr int kPasses = 1;
struct Acc { T m; int64_t i; };
inline void init(Acc& a) { a.m = std::numeric_limits<T>::infinity(); a.i = 0; }
inline void step(Acc& a, T x, int64_t k, int) {
  if (a.m != a.m) return;
  if (x < a.m || x != x) { a.m = x; a.i = k; }
}
constexpr int kStripes = 8;
// Stripes cover interleaved indices: the better value wins, and of two equal ones (or two nans)
// the smaller index, as a single pass would have it.
inline void combine(Acc& a, const Acc& b) {
  const bool an = a.m != a.m, bn = b.m != b.m;
  if (an || bn) {
    if (an && bn) { if (b.i < a.i) a = b; }
    else if (bn) a = b;
    return;
  }
  if (b.m < a.m || (b.m == a.m && b.i < a.i)) a = b;
}
inline void between(Acc&, int64_t, int) {}
inline R finish(const Acc& a, int64_t, int64_t) { return a.i; }

R lane(const T* p, int64_t K, int64_t s, int64_t ddof) {
  if (kStripes > 1 && s == 1 && K >= 4 * kStripes) {
    // kStripes independent accumulators over interleaved elements, then combined (the
    // combination does not depend on the order: see combine).
    Acc st[kStripes > 1 ? kStripes : 1];
    for (int j = 0; j < kStripes; ++j) init(st[j]);
    int64_t k = 0;
    for (; k + kStripes <= K; k += kStripes)
      for (int j = 0; j < kStripes; ++j) step(st[j], p[k + j], k + j, 0);
    for (; k < K; ++k) step(st[0], p[k], k, 0);
    for (int j = 1; j < kStripes; ++j) combine(st[0], st[j]);
    between(st[0], K, 0);
    return finish(st[0], K, ddof);
  }
  Acc acc;
  init(acc);
  for (int pass = 0; pass < kPasses; ++pass) {
    if (s == 1) {
      for (int64_t k = 0; k < K; ++k) step(acc, p[k], k, pass);
    } else {
      for (int64_t k = 0; k < K; ++k) step(acc, p[k * s], k, pass);
    }
    between(acc, K, pass);
  }
  return finish(acc, K, ddof);
}

}  // namespace

void numpy_argmin__f32(const opgen::Tensor& a, int64_t axis, bool keepdims, opgen::Tensor& out) {
  (void)keepdims;
  const int64_t ddof = 0;
  const int nd = a.ndim();
  if (axis < -nd || axis >= nd) throw opgen::Error(opgen::ErrorKind::Value, "axis out of range");
  if (axis < 0) axis += nd;
  const int64_t K = a.size(static_cast<int>(axis)), sK = a.stride(static_cast<int>(axis));
  if (K == 0) throw opgen::Error(opgen::ErrorKind::Value, "zero-size array to reduction operation which has no identity");
  R* dst = out.data<R>();
  const int64_t n_out = out.numel();
  if (n_out == 0) return;
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
    dst[0] = lane(src, K, sK, ddof);
    return;
  }
  const int64_t run = shape[kd - 1], run_stride = stride[kd - 1];
  const int64_t runs = n_out / run;
  const bool along = std::llabs(sK) <= std::llabs(run_stride);

  constexpr int64_t kCols = 256;
  Acc acc[kCols];
  int64_t idx[OPGEN_MAX_DIMS] = {};
  int64_t off = 0;
  for (int64_t r = 0; r < runs; ++r) {
    R* o = dst + r * run;
    const T* base = src + off;
    if (along) {
      for (int64_t j = 0; j < run; ++j) o[j] = lane(base + j * run_stride, K, sK, ddof);
    } else {
      for (int64_t j0 = 0; j0 < run; j0 += kCols) {
        const int64_t m = run - j0 < kCols ? run - j0 : kCols;
        const T* col = base + j0 * run_stride;
        for (int64_t j = 0; j < m; ++j) init(acc[j]);
        for (int pass = 0; pass < kPasses; ++pass) {
          for (int64_t k = 0; k < K; ++k) {
            const T* row = col + k * sK;
            if (run_stride == 1) {
              for (int64_t j = 0; j < m; ++j) step(acc[j], row[j], k, pass);
            } else {
              for (int64_t j = 0; j < m; ++j) step(acc[j], row[j * run_stride], k, pass);
            }
          }
          for (int64_t j = 0; j < m; ++j) between(acc[j], K, pass);
        }
        for (int64_t j = 0; j < m; ++j) o[j0 + j] = finish(acc[j], K, ddof);
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
