// torch.logsumexp, overload f32: torch.logsumexp(input, dim, keepdim).
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
#include <cstring>
#include <limits>

namespace opgen::kernels {

namespace {

using T = float;
using R = T;

constexpr int kPasses = 2;
struct Acc { double m, s; bool nan; };
constexpr int kStripes = 1;  // two passes: the generic lane loop
inline void combine(Acc&, const Acc&) {}
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

// exp(x) for x <= 0 (or nan), about 2e-10 relative (far below float32's 6e-8): x = k*ln2 + r
// with |r| <= ln2/2, a degree-8 Taylor polynomial for exp(r), 2^k put into the exponent bits.
// Branch-free, so the compiler vectorises it. Below -110 exp is < 2e-48, nothing next to the
// sum (>= 1, the max's own term).
inline double exp_neg(double x) {
  x = x < -110.0 ? -110.0 : x;
  const double kShift = 6755399441055744.0;  // 1.5 * 2^52
  const double kd = x * 1.4426950408889634 + kShift;
  uint64_t kbits;
  std::memcpy(&kbits, &kd, sizeof kbits);
  const double k = kd - kShift;
  const double r = (x - k * 0.6931471803691238) - k * 1.9082149292705877e-10;
  double p = 1.0 / 40320.0;
  p = p * r + 1.0 / 5040.0;
  p = p * r + 1.0 / 720.0;
  p = p * r + 1.0 / 120.0;
  p = p * r + 1.0 / 24.0;
  p = p * r + 1.0 / 6.0;
  p = p * r + 0.5;
  p = p * r + 1.0;
  p = p * r + 1.0;
  const uint64_t sbits = (kbits + 1023) << 52;
  double scale;
  std::memcpy(&scale, &sbits, sizeof scale);
  return p * scale;
}

// A contiguous lane of K >= 64: the max and the nan flag over 16 stripes, then the sum of
// exp(x - m) over 8 stripes of doubles. A nan row is nan, a row whose max is +-inf is +-inf
// (all -inf: log(0); +inf: inf), as torch.
R fast_lane(const T* p, int64_t K) {
  T mx[16];
  bool bad[16];
  for (int j = 0; j < 16; ++j) { mx[j] = -std::numeric_limits<T>::infinity(); bad[j] = false; }
  int64_t k = 0;
  for (; k + 16 <= K; k += 16)
    for (int j = 0; j < 16; ++j) {
      const T v = p[k + j];
      bad[j] = bad[j] | (v != v);
      mx[j] = v > mx[j] ? v : mx[j];
    }
  T m = -std::numeric_limits<T>::infinity();
  bool nan = false;
  for (; k < K; ++k) { nan = nan || p[k] != p[k]; m = p[k] > m ? p[k] : m; }
  for (int j = 0; j < 16; ++j) { nan = nan || bad[j]; m = mx[j] > m ? mx[j] : m; }
  if (nan) return std::numeric_limits<R>::quiet_NaN();
  if (std::isinf(m)) return static_cast<R>(m);
  const double md = static_cast<double>(m);
  double s[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  k = 0;
  for (; k + 8 <= K; k += 8)
    for (int j = 0; j < 8; ++j) s[j] += exp_neg(static_cast<double>(p[k + j]) - md);
  double tail = 0.0;
  for (; k < K; ++k) tail += exp_neg(static_cast<double>(p[k]) - md);
  const double total = ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7])) + tail;
  return static_cast<R>(std::log(total) + md);
}

R lane(const T* p, int64_t K, int64_t s, int64_t ddof) {
  if (s == 1 && K >= 64) return fast_lane(p, K);
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

void torch_logsumexp__f32(const opgen::Tensor& input, int64_t dim, bool keepdim, opgen::Tensor& out) {
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
