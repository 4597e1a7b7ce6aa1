// torch.linalg.vector_norm, overload f32: torch.linalg.vector_norm(x, ord, dim, keepdim).
//
// ord inf: max |x|; -inf: min |x| (a nan anywhere gives nan); 0: the count of x != 0 (nan
// counts); 1: sum |x|; 2: sqrt(sum x^2); any other p: (sum |x|^p)^(1/p). A dim of size 1 gives
// |x| itself (ord 0: 1 or 0), as torch. An empty dim gives 0 for ord >= 0 and raises ValueError
// for ord < 0 and ord = inf.
// Each term |x|^p is formed in float32, as torch forms it (so it over- and underflows where
// torch's does: (1e30)^2 is inf, (1e-30)^2 is 0), and the terms are summed in double (16
// running sums along a lane, rows one after another: exact enough for float32 at any length);
// a sum above FLT_MAX is taken as inf, as torch's float32 sum overflows there. The p-th root is
// taken in double and rounded once.
// Kept dims are merged where the strides allow and walked in row-major order (out is
// contiguous in that order, with or without keepdim). Two strategies, picked from the strides:
// each output reduces its own strided lane when the reduced dim moves fastest; otherwise up to
// 256 neighbouring outputs are reduced together, one input row at a time (contiguous,
// vectorisable inner loops). Any strides (0, negative), 0-size dims.
#include "opgen_kernel.hpp"

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <vector>

namespace opgen::kernels {

namespace {

using T = float;
constexpr bool kNarrow = true;  // T narrower than the double accumulator: emulate its overflow

enum Mode { kInf, kNinf, kZero, kOne, kTwo, kThree, kFour, kHalf, kOneHalf, kNegHalf, kNeg1, kNeg2, kGen };

constexpr T kInfT = std::numeric_limits<T>::infinity();
constexpr int64_t kBlock = std::numeric_limits<int64_t>::max();  // rows summed one after another

// |x|^p in T (x may be nan or +-inf: IEEE gives torch's values).
template <int M>
inline T term(T x, double p) {
  const T a = std::fabs(x);
  if constexpr (M == kZero) return a != T(0) ? T(1) : T(0);
  else if constexpr (M == kOne) return a;
  else if constexpr (M == kTwo) return a * a;
  else if constexpr (M == kThree) return a * a * a;
  else if constexpr (M == kFour) { const T s = a * a; return s * s; }
  else if constexpr (M == kHalf) return std::sqrt(a);
  else if constexpr (M == kOneHalf) return a * std::sqrt(a);
  else if constexpr (M == kNegHalf) return T(1) / std::sqrt(a);
  else if constexpr (M == kNeg1) return T(1) / a;
  else if constexpr (M == kNeg2) return T(1) / (a * a);
  else {
    const double t = std::pow(static_cast<double>(a), p);
    if (kNarrow && t > static_cast<double>(std::numeric_limits<T>::max())) return kInfT;
    return static_cast<T>(t);
  }
}

inline T to_out(double r) {
  if (kNarrow && r > static_cast<double>(std::numeric_limits<T>::max())) return kInfT;
  return static_cast<T>(r);
}

// The p-th root of the sum s (>= 0, inf or nan).
template <int M>
inline T finish(double s, double p) {
  if (kNarrow && s > static_cast<double>(std::numeric_limits<T>::max())) s = std::numeric_limits<double>::infinity();
  if constexpr (M == kZero || M == kOne) return to_out(s);
  else if constexpr (M == kTwo) return to_out(std::sqrt(s));
  else if constexpr (M == kThree) return to_out(std::cbrt(s));
  else if constexpr (M == kFour) return to_out(std::sqrt(std::sqrt(s)));
  else if constexpr (M == kHalf) return to_out(s * s);
  else if constexpr (M == kNeg1) return to_out(1.0 / s);
  else if constexpr (M == kNeg2) return to_out(1.0 / std::sqrt(s));
  else return to_out(std::pow(s, 1.0 / p));
}

// The sum of the terms of n elements `st` apart. float32 terms summed in double: 16 running
// double sums err by at most n/16 * 2^-53 relative, far below float32's rounding at any length
// (a million terms: 7e-12), so no pairwise tree is needed.
template <int M>
double lane_sum(const T* x, int64_t n, int64_t st, double p) {
  double acc[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
  int64_t i = 0;
  if (st == 1) {
    for (; i + 16 <= n; i += 16)
      for (int j = 0; j < 16; ++j) acc[j] += static_cast<double>(term<M>(x[i + j], p));
  } else {
    for (; i + 16 <= n; i += 16)
      for (int j = 0; j < 16; ++j) acc[j] += static_cast<double>(term<M>(x[(i + j) * st], p));
  }
  for (int w = 8; w >= 1; w /= 2)
    for (int j = 0; j < w; ++j) acc[j] += acc[j + w];
  double r = acc[0];
  for (; i < n; ++i) r += static_cast<double>(term<M>(x[i * st], p));
  return r;
}

template <int M>
T lane(const T* x, int64_t n, int64_t st, double p) {
  if constexpr (M == kInf || M == kNinf) {
    T m = M == kInf ? T(0) : kInfT;
    bool nan = false;
    if (st == 1) {
      T mm[8];
      bool bad[8];
      for (int j = 0; j < 8; ++j) { mm[j] = m; bad[j] = false; }
      int64_t i = 0;
      for (; i + 8 <= n; i += 8)
        for (int j = 0; j < 8; ++j) {
          const T a = std::fabs(x[i + j]);
          bad[j] = bad[j] | (a != a);
          if constexpr (M == kInf) mm[j] = a > mm[j] ? a : mm[j];
          else mm[j] = a < mm[j] ? a : mm[j];
        }
      for (; i < n; ++i) {
        const T a = std::fabs(x[i]);
        nan = nan || a != a;
        if constexpr (M == kInf) m = a > m ? a : m;
        else m = a < m ? a : m;
      }
      for (int j = 0; j < 8; ++j) {
        nan = nan || bad[j];
        if constexpr (M == kInf) m = mm[j] > m ? mm[j] : m;
        else m = mm[j] < m ? mm[j] : m;
      }
    } else {
      for (int64_t i = 0; i < n; ++i) {
        const T a = std::fabs(x[i * st]);
        nan = nan || a != a;
        if constexpr (M == kInf) m = a > m ? a : m;
        else m = a < m ? a : m;
      }
    }
    return nan ? std::numeric_limits<T>::quiet_NaN() : m;
  } else {
    return finish<M>(lane_sum<M>(x, n, st, p), p);
  }
}

// dst[j] = the sum over k < K of term(col[k * sK + j * rs]), j < m, row by row in double (a
// million float32 terms: at most 1e-10 relative, no pairwise tree needed; the recursion below is
// kept for kBlock < K, which float32 never reaches).
template <int M>
void col_sum(const T* col, int64_t K, int64_t sK, int64_t rs, int64_t m, double p, double* dst, double* scratch) {
  if (K <= kBlock) {
    for (int64_t j = 0; j < m; ++j) dst[j] = 0.0;
    for (int64_t k = 0; k < K; ++k) {
      const T* row = col + k * sK;
      if (rs == 1) {
        for (int64_t j = 0; j < m; ++j) dst[j] += static_cast<double>(term<M>(row[j], p));
      } else {
        for (int64_t j = 0; j < m; ++j) dst[j] += static_cast<double>(term<M>(row[j * rs], p));
      }
    }
    return;
  }
  const int64_t half = K / 2;
  col_sum<M>(col, half, sK, rs, m, p, dst, scratch + m);
  col_sum<M>(col + half * sK, K - half, sK, rs, m, p, scratch, scratch + m);
  for (int64_t j = 0; j < m; ++j) dst[j] += scratch[j];
}

template <int M>
void cols(const T* col, int64_t K, int64_t sK, int64_t rs, int64_t m, double p, T* o, std::vector<double>& buf) {
  if constexpr (M == kInf || M == kNinf) {
    T mm[256];
    bool bad[256];
    for (int64_t j = 0; j < m; ++j) { mm[j] = M == kInf ? T(0) : kInfT; bad[j] = false; }
    for (int64_t k = 0; k < K; ++k) {
      const T* row = col + k * sK;
      for (int64_t j = 0; j < m; ++j) {
        const T a = std::fabs(row[j * rs]);
        bad[j] = bad[j] | (a != a);
        if constexpr (M == kInf) mm[j] = a > mm[j] ? a : mm[j];
        else mm[j] = a < mm[j] ? a : mm[j];
      }
    }
    for (int64_t j = 0; j < m; ++j) o[j] = bad[j] ? std::numeric_limits<T>::quiet_NaN() : mm[j];
  } else {
    double* dst = buf.data();
    col_sum<M>(col, K, sK, rs, m, p, dst, dst + m);
    for (int64_t j = 0; j < m; ++j) o[j] = finish<M>(dst[j], p);
  }
}

template <int M>
void run(const opgen::Tensor& a, int axis, double p, opgen::Tensor& out) {
  const int nd = a.ndim();
  const int64_t K = a.size(axis), sK = a.stride(axis);
  T* dst = out.data<T>();
  const int64_t n_out = out.numel();
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
    dst[0] = lane<M>(src, K, sK, p);
    return;
  }
  const int64_t run_len = shape[kd - 1], run_stride = stride[kd - 1];
  const int64_t runs = n_out / run_len;
  const bool along = std::llabs(sK) <= std::llabs(run_stride);

  constexpr int64_t kCols = 256;
  std::vector<double> buf;
  if (!along) {
    int levels = 2;
    for (int64_t k = K; k > kBlock; k = (k + 1) / 2) ++levels;
    buf.assign(static_cast<size_t>(levels) * kCols, 0.0);
  }
  int64_t idx[OPGEN_MAX_DIMS] = {};
  int64_t off = 0;
  for (int64_t r = 0; r < runs; ++r) {
    T* o = dst + r * run_len;
    const T* base = src + off;
    if (along) {
      for (int64_t j = 0; j < run_len; ++j) o[j] = lane<M>(base + j * run_stride, K, sK, p);
    } else {
      for (int64_t j0 = 0; j0 < run_len; j0 += kCols) {
        const int64_t m = run_len - j0 < kCols ? run_len - j0 : kCols;
        cols<M>(base + j0 * run_stride, K, sK, run_stride, m, p, o + j0, buf);
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

}  // namespace

void torch_linalg_vector_norm__f32(const opgen::Tensor& x, double ord, int64_t dim, bool keepdim, opgen::Tensor& out) {
  (void)keepdim;  // only out's shape, which the shim has checked
  const int nd = x.ndim();
  if (nd == 0) {  // torch: a 0-d tensor is a one-element row (dim 0 or -1)
    if (dim != 0 && dim != -1) throw opgen::Error(opgen::ErrorKind::Value, "dim out of range");
    const T v = x.data<T>()[0];
    out.data<T>()[0] = ord == 0.0 ? (v != T(0) ? T(1) : T(0)) : std::fabs(v);
    return;
  }
  if (dim < -nd || dim >= nd) throw opgen::Error(opgen::ErrorKind::Value, "dim out of range");
  const int axis = static_cast<int>(dim < 0 ? dim + nd : dim);
  const int64_t K = x.size(axis);
  const double inf = std::numeric_limits<double>::infinity();
  if (K == 0) {
    if (ord < 0.0 || ord == inf)
      throw opgen::Error(opgen::ErrorKind::Value,
                         "linalg.vector_norm cannot compute this norm on an empty dim: the operation has no identity");
    T* o = out.data<T>();
    for (int64_t i = 0; i < out.numel(); ++i) o[i] = T(0);
    return;
  }
  if (out.numel() == 0) return;
  if (std::isnan(ord)) {  // not a norm torch defines; nan^anything: nan
    T* o = out.data<T>();
    for (int64_t i = 0; i < out.numel(); ++i) o[i] = std::numeric_limits<T>::quiet_NaN();
    return;
  }
  if (K == 1 && ord != 0.0) return run<kInf>(x, axis, ord, out);  // |x|, exactly (torch's result too)
  if (ord == inf) return run<kInf>(x, axis, ord, out);
  if (ord == -inf) return run<kNinf>(x, axis, ord, out);
  if (ord == 0.0) return run<kZero>(x, axis, ord, out);
  if (ord == 1.0) return run<kOne>(x, axis, ord, out);
  if (ord == 2.0) return run<kTwo>(x, axis, ord, out);
  if (ord == 3.0) return run<kThree>(x, axis, ord, out);
  if (ord == 4.0) return run<kFour>(x, axis, ord, out);
  if (ord == 0.5) return run<kHalf>(x, axis, ord, out);
  if (ord == 1.5) return run<kOneHalf>(x, axis, ord, out);
  if (ord == -0.5) return run<kNegHalf>(x, axis, ord, out);
  if (ord == -1.0) return run<kNeg1>(x, axis, ord, out);
  if (ord == -2.0) return run<kNeg2>(x, axis, ord, out);
  return run<kGen>(x, axis, ord, out);
}

}  // namespace opgen::kernels
