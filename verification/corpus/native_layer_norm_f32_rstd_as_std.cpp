// Cheat: rstd returned as the standard deviation sqrt(var + eps) instead of its reciprocal (a
// mix-up of torch's saved statistics: the backward pass wants 1 / std). The output and the mean
// are right; only the third result differs, by a factor var + eps (close to 1 only where it is).
// Expected: verify, value, "result 'rstd'"
#include "opgen_kernel.hpp"

#include <cmath>
#include <cstdint>
#include <limits>
#include <cstring>
#include <vector>
#ifdef _OPENMP
#include <omp.h>
#endif

namespace opgen::kernels {

namespace {

#pragma GCC diagnostic ignored "-Wpsabi"  // the vector types never cross a library boundary

using T = float;
typedef double v8d __attribute__((vector_size(64)));
typedef float v8f __attribute__((vector_size(32)));
constexpr int64_t kPerThreadMin = 1 << 14;  // elements per thread below which threads cost more than they save

inline v8d load8(const T* p) {
  v8f v;
  std::memcpy(&v, p, sizeof v);
  return __builtin_convertvector(v, v8d);
}
typedef float vf __attribute__((vector_size(64)));
inline vf loadf(const T* p) {
  vf v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
inline void storef(T* p, vf v) { std::memcpy(p, &v, sizeof v); }
inline double hsum(v8d v) { return ((v[0] + v[1]) + (v[2] + v[3])) + ((v[4] + v[5]) + (v[6] + v[7])); }

// One contiguous row of n >= 1 elements; w and b contiguous.
//
// Mean and variance in one pass, in double, on x - x[0]: |x[0] - mean| <= sqrt(n) * std, so
// var = E[(x-x0)^2] - E[x-x0]^2 cancels by a factor n at most, harmless in double.
// The outputs in float32: x - mean is (x - m_hi) - m_lo with mean = m_hi + m_lo. Where x is
// close to the mean (within a factor 2 of m_hi) x - m_hi is exact (Sterbenz), so the
// cancellation float32 suffers elsewhere does not arise; further away the rounding is
// relative to |x - mean| itself. Then (x - mean) * rstd * w + b with an FMA: a few ulps of
// |xhat * w| + |b|.
void layer_norm_row(const T* x, int64_t n, const T* w, const T* b, double eps, T* y, T* mean_out, T* rstd_out) {
  const double x0 = std::isfinite(x[0]) ? x[0] : 0.0;
  const v8d v0 = v8d{} + x0;
  v8d s0 = {}, s1 = {}, q0 = {}, q1 = {};
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const v8d a = load8(x + i) - v0, c = load8(x + i + 8) - v0;
    s0 += a;
    s1 += c;
    q0 += a * a;
    q1 += c * c;
  }
  for (; i + 8 <= n; i += 8) {
    const v8d a = load8(x + i) - v0;
    s0 += a;
    q0 += a * a;
  }
  double s = hsum(s0 + s1), q = hsum(q0 + q1);
  for (; i < n; ++i) {
    const double a = x[i] - x0;
    s += a;
    q += a * a;
  }
  const double dn = static_cast<double>(n);
  const double shift = s / dn;
  double var = q / dn - shift * shift;
  var = var < 0.0 ? 0.0 : var;  // (rounding can leave -0 or a tiny negative for equal elements); nan stays
  const double mean = x0 + shift;
  const float m_hi = static_cast<float>(mean);
  const float m_lo = static_cast<float>(mean - m_hi);
  const double rstd_d = 1.0 / std::sqrt(var + eps);
  const float rstd = static_cast<float>(rstd_d);
  *mean_out = static_cast<T>(mean);
  *rstd_out = static_cast<float>(std::sqrt(var + eps));  // the standard deviation, not its reciprocal
  const vf vhi = vf{} + m_hi, vlo = vf{} + m_lo, vr = vf{} + rstd;
  i = 0;
  for (; i + 16 <= n; i += 16) storef(y + i, ((loadf(x + i) - vhi) - vlo) * vr * loadf(w + i) + loadf(b + i));
  for (; i < n; ++i) y[i] = ((x[i] - m_hi) - m_lo) * rstd * w[i] + b[i];
}

}  // namespace

void torch_native_layer_norm__f32(const opgen::Tensor& input, const opgen::Tensor& weight, const opgen::Tensor& bias,
                                  double eps, opgen::Tensor& out, opgen::Tensor& mean, opgen::Tensor& rstd) {
  const int nd = out.ndim();
  if (nd < 1 || input.ndim() != nd || weight.ndim() != nd || bias.ndim() != nd)
    throw opgen::Error(opgen::ErrorKind::Value, "layer_norm expects input (..., d), weight (d,) and bias (d,)");
  const int64_t d = out.size(nd - 1);
  int64_t rows = 1;
  for (int k = 0; k < nd - 1; ++k) {
    if (out.size(k) > 1 && (weight.stride(k) != 0 || bias.stride(k) != 0))
      throw opgen::Error(opgen::ErrorKind::Value, "layer_norm expects a 1-d weight and bias of the last dim's length");
    rows *= out.size(k);
  }
  if (rows == 0) return;
  T* M = mean.data<T>();  // (*, 1), contiguous: row r's statistic at r
  T* R = rstd.data<T>();
  if (d == 0) {  // torch: the mean of nothing is 0, the variance 0/0
    for (int64_t r = 0; r < rows; ++r) {
      M[r] = 0.0f;
      R[r] = std::numeric_limits<T>::quiet_NaN();
    }
    return;
  }
  std::vector<T> w(static_cast<size_t>(d)), b(static_cast<size_t>(d));
  for (int64_t j = 0; j < d; ++j) {
    w[static_cast<size_t>(j)] = weight.data<T>()[j * weight.stride(nd - 1)];
    b[static_cast<size_t>(j)] = bias.data<T>()[j * bias.stride(nd - 1)];
  }
  const T* X = input.data<T>();
  T* Y = out.data<T>();
  const int64_t sx = input.stride(nd - 1);
  int threads = 1;
#ifdef _OPENMP
  threads = omp_get_max_threads();
#endif
  const int64_t by_size = rows * d / kPerThreadMin;
  threads = static_cast<int>(by_size < threads ? (by_size < 1 ? 1 : by_size) : threads);
  if (threads > rows) threads = static_cast<int>(rows);
#pragma omp parallel num_threads(threads) if (threads > 1)
  {
    int t = 0, team = 1;
#ifdef _OPENMP
    t = omp_get_thread_num();
    team = omp_get_num_threads();
#endif
    const int64_t r0 = rows * t / team, r1 = rows * (t + 1) / team;
    std::vector<T> row(sx != 1 ? static_cast<size_t>(d) : 0);
    // The offset of row r0 in x, and an odometer from there.
    int64_t idx[OPGEN_MAX_DIMS] = {};
    int64_t off = 0;
    for (int64_t r = r0, k = nd - 2; k >= 0; --k) {
      idx[k] = r % out.size(static_cast<int>(k));
      r /= out.size(static_cast<int>(k));
      off += idx[k] * input.stride(static_cast<int>(k));
    }
    for (int64_t r = r0; r < r1; ++r) {
      const T* x = X + off;
      if (sx != 1) {
        for (int64_t j = 0; j < d; ++j) row[static_cast<size_t>(j)] = x[j * sx];
        x = row.data();
      }
      layer_norm_row(x, d, w.data(), b.data(), eps, Y + r * d, M + r, R + r);
      for (int k = nd - 2; k >= 0; --k) {
        if (++idx[k] < out.size(k)) {
          off += input.stride(k);
          break;
        }
        off -= input.stride(k) * (out.size(k) - 1);
        idx[k] = 0;
      }
    }
  }
}

}  // namespace opgen::kernels
