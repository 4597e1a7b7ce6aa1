// numpy.std, overload f64: numpy.std(a, axis=axis, ddof=ddof, keepdims=keepdims).
//
// sqrt of the variance: the sum of squared deviations from the mean over max(n - ddof, 0),
// two-pass in double, rounded once. An empty axis, or n - ddof <= 0 with a zero sum, gives
// nan; n - ddof <= 0 otherwise inf; inf or nan in a row gives nan.
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

using T = double;
using R = T;

constexpr int kPasses = 2;
// Two passes in double: the mean, then the deviations d = x - mean, their sum c and the sum of
// their squares q; the corrected two-pass formula q - c*c/n removes the first-order error of
// the mean. The divisor is max(n - ddof, 0): 0 gives inf (nan for 0/0), as NumPy.
struct Acc { double s, mean, c, q; };
inline void init(Acc& a) { a.s = 0.0; a.mean = 0.0; a.c = 0.0; a.q = 0.0; }
inline void step(Acc& a, T x, int64_t, int pass) {
  if (pass == 0) {
    a.s += static_cast<double>(x);
  } else {
    const double d = static_cast<double>(x) - a.mean;
    a.c += d;
    a.q += d * d;
  }
}
inline void between(Acc& a, int64_t K, int pass) {
  if (pass == 0) a.mean = a.s / static_cast<double>(K);
}
inline double variance(const Acc& a, int64_t K, int64_t ddof) {
  const double n = static_cast<double>(K);
  double ssd = a.q - a.c * a.c / n;
  if (ssd < 0.0) ssd = 0.0;
  const double div = K - ddof > 0 ? static_cast<double>(K - ddof) : 0.0;
  return ssd / div;
}
inline R finish(const Acc& a, int64_t K, int64_t ddof) { return static_cast<R>(std::sqrt(variance(a, K, ddof))); }

R lane(const T* p, int64_t K, int64_t s, int64_t ddof) {
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

void numpy_std__f64(const opgen::Tensor& a, int64_t axis, int64_t ddof, bool keepdims, opgen::Tensor& out) {
  (void)keepdims;
  const int nd = a.ndim();
  if (axis < -nd || axis >= nd) throw opgen::Error(opgen::ErrorKind::Value, "axis out of range");
  if (axis < 0) axis += nd;
  const int64_t K = a.size(static_cast<int>(axis)), sK = a.stride(static_cast<int>(axis));
  
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
