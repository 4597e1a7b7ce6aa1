// torch.logsumexp, overload f64: torch.logsumexp(input, dim, keepdim).
//
// m + log(sum(exp(x - m))) in double, as torch computes it: m is the max along the dim, taken
// as 0 when it is +-inf (so an all -inf row, or an empty one, gives log(0) = -inf and a
// row with +inf gives inf); a nan anywhere gives nan.
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
struct Acc { double m, s; bool nan; };
inline void init(Acc& a) { a.m = -std::numeric_limits<double>::infinity(); a.s = 0.0; a.nan = false; }
inline void step(Acc& a, T x, int64_t, int pass) {
  const double v = static_cast<double>(x);
  if (pass == 0) {
    a.nan = a.nan || (v != v);
    a.m = v > a.m ? v : a.m;
  } else {
    a.s += std::exp(v - a.m);
  }
}
inline void between(Acc& a, int64_t, int pass) {
  if (pass == 0 && std::isinf(a.m)) a.m = 0.0;
}
inline R finish(const Acc& a, int64_t, int64_t) {
  if (a.nan) return std::numeric_limits<R>::quiet_NaN();
  return static_cast<R>(std::log(a.s) + a.m);
}

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

void torch_logsumexp__f64(const opgen::Tensor& input, int64_t dim, bool keepdim, opgen::Tensor& out) {
  const opgen::Tensor& a = input;
  int64_t axis = dim;
  const int64_t ddof = 0;
  (void)keepdim;
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
