// torch.nn.functional.softplus, overload f64: with b = (T)beta and h = (T)threshold (PyTorch
// rounds both to the tensor's dtype) and t = x * b rounded in float64: out = t > h ? x :
// log1p(exp(t)) / b, as PyTorch's CPU kernel computes it (the same product and the same
// comparison, so the branch is PyTorch's for every x).
//   - exp(t) by a Cephes-style reduction (t = n ln2 + r), a polynomial (Cephes' expf for
//     float, degree-13 Taylor for double) and 2^n as two normal powers of two: overflow to
//     inf and underflow into the subnormals and to 0 are right;
//   - log1p(e) = log(1 + e) * e / ((1 + e) - 1) (Goldberg's correction of the rounding of
//     1 + e), e where 1 + e rounds to 1; log by musl's reduction and fdlibm's polynomial;
//   - then one rounded division by b.
// nan gives nan, -inf gives 0, +inf gives inf (t > h), -0.0 gives ln 2 / b.
//
// out is contiguous with input's shape; input may be strided (any strides, 0 and negative
// included). Size-1 dims are dropped and neighbours merged where input allows, so a contiguous
// input is one flat run; strided runs are gathered into a small buffer first. Large tensors
// are split across OpenMP threads in vector-aligned blocks of out. GCC vector extensions
// (sixteen float or eight double lanes) carry the arithmetic.
#include "opgen_kernel.hpp"

#include <cstdint>
#include <cstring>
#ifdef _OPENMP
#include <omp.h>
#endif

namespace opgen::kernels {

namespace {

#pragma GCC diagnostic ignored "-Wpsabi"  // the vector types never cross a library boundary

using T = double;
constexpr int L = 8;
typedef double V __attribute__((vector_size(64)));
typedef int64_t VI __attribute__((vector_size(64)));
typedef uint64_t VU __attribute__((vector_size(64)));
constexpr int kMant = 52, kBias = 1023;
constexpr int64_t kPerThreadMin = 1 << 15;  // elements per thread below which a team costs more than it saves
constexpr int64_t kChunk = 1024;           // gather buffer for strided runs (a multiple of L)

constexpr bool kF32 = sizeof(T) == 4;

inline V splat(T v) { return V{} + v; }
inline V loadv(const T* p) {
  V v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
inline void storev(T* p, V v) { std::memcpy(p, &v, sizeof v); }
inline V sel(decltype(V{} < V{}) m, V a, V b) { return m ? a : b; }

// 2^e for e in the normal exponent range, exactly.
inline V pow2i(VI e) { return reinterpret_cast<V>((e + kBias) << kMant); }

// Round to the nearest integer (|t| < 2^(mant-1)): adding and subtracting 1.5 * 2^mant.
inline V rint_v(V t) {
  const V magic = splat(kF32 ? T(12582912.0) : T(6755399441055744.0));
  return (t + magic) - magic;
}
// n (an integer-valued vector, nan lanes allowed) as integers (nan lanes give 0).
inline VI to_int(V n) { return __builtin_convertvector(n == n ? n : splat(0), VI); }

// ln2 in two parts, the high part with trailing zeros so that n * hi is exact.
constexpr T kLn2Hi = kF32 ? T(0.693359375) : T(6.93147180369123816490e-01);
constexpr T kLn2Lo = kF32 ? T(-2.12194440e-4) : T(1.90821492927058770002e-10);
constexpr T kLog2e = kF32 ? T(1.44269504088896341) : T(1.44269504088896338700e+00);

// exp(r) for |r| <= ln2/2: Cephes' expf polynomial (float), Taylor to degree 13 (double).
inline V exp_poly(V r) {
  if constexpr (kF32) {
    V p = splat(1.9875691500e-4f);
    p = p * r + splat(1.3981999507e-3f);
    p = p * r + splat(8.3334519073e-3f);
    p = p * r + splat(4.1665795894e-2f);
    p = p * r + splat(1.6666665459e-1f);
    p = p * r + splat(5.0000001201e-1f);
    return p * (r * r) + r + splat(1.0f);
  } else {
    V p = splat(1.0 / 6227020800.0);
    p = p * r + splat(1.0 / 479001600.0);
    p = p * r + splat(1.0 / 39916800.0);
    p = p * r + splat(1.0 / 3628800.0);
    p = p * r + splat(1.0 / 362880.0);
    p = p * r + splat(1.0 / 40320.0);
    p = p * r + splat(1.0 / 5040.0);
    p = p * r + splat(1.0 / 720.0);
    p = p * r + splat(1.0 / 120.0);
    p = p * r + splat(1.0 / 24.0);
    p = p * r + splat(1.0 / 6.0);
    p = p * r + splat(0.5);
    return p * (r * r) + r + splat(1.0);
  }
}

// exp(t) over the whole range: inf above the overflow edge, correctly scaled into the
// subnormals and 0 below the underflow edge, nan for nan. 2^n is applied as two normal
// powers of two (n is in [-150, 129] for float, [-1077, 1025] for double), so the only
// rounding into the subnormals is the last multiply.
inline V expv(V t) {
  const V hi = splat(kF32 ? T(100.0) : T(720.0)), lo = splat(kF32 ? T(-104.0) : T(-746.0));
  t = t > hi ? hi : t;
  t = t < lo ? lo : t;  // nan compares false and passes both clamps unchanged
  const V n = rint_v(t * splat(kLog2e));
  const V r = (t - n * splat(kLn2Hi)) - n * splat(kLn2Lo);
  const V p = exp_poly(r);
  const VI e = to_int(n);
  const VI e1 = e >> 1;
  return p * pow2i(e1) * pow2i(e - e1);
}

// expm1(x) for x <= 0 (lanes above 0 give garbage the caller discards; nan gives nan):
// x = n ln2 + r, expm1(x) = 2^n expm1(r) + (2^n - 1), expm1(r) by its Taylor series (degree 8
// for float, 14 for double, |r| <= ln2/2). 2^n expm1(r) is exact and 2^n - 1 is exact or
// rounds to -1 where the result is -1 anyway, so one rounding is added to the polynomial's.
inline V expm1_neg(V x) {
  const V lo = splat(kF32 ? T(-30.0) : T(-40.0));  // below: the result rounds to -1
  x = x < lo ? lo : x;
  x = x > splat(0) ? splat(0) : x;
  const V n = rint_v(x * splat(kLog2e));
  const V r = (x - n * splat(kLn2Hi)) - n * splat(kLn2Lo);
  V p;
  if constexpr (kF32) {
    p = splat(1.0f / 40320.0f);
    p = p * r + splat(1.0f / 5040.0f);
    p = p * r + splat(1.0f / 720.0f);
    p = p * r + splat(1.0f / 120.0f);
    p = p * r + splat(1.0f / 24.0f);
    p = p * r + splat(1.0f / 6.0f);
    p = p * r + splat(0.5f);
  } else {
    p = splat(1.0 / 87178291200.0);
    p = p * r + splat(1.0 / 6227020800.0);
    p = p * r + splat(1.0 / 479001600.0);
    p = p * r + splat(1.0 / 39916800.0);
    p = p * r + splat(1.0 / 3628800.0);
    p = p * r + splat(1.0 / 362880.0);
    p = p * r + splat(1.0 / 40320.0);
    p = p * r + splat(1.0 / 5040.0);
    p = p * r + splat(1.0 / 720.0);
    p = p * r + splat(1.0 / 120.0);
    p = p * r + splat(1.0 / 24.0);
    p = p * r + splat(1.0 / 6.0);
    p = p * r + splat(0.5);
  }
  const V q = p * (r * r) + r;  // expm1(r)
  const V s = pow2i(to_int(n));
  return x == splat(0) ? x : s * q + (s - splat(1));  // expm1(+-0) = +-0 (q + 0 would lose -0's sign)
}

// log(w) for normal w >= 1 (musl's reduction: w = 2^k m, m in [sqrt(2)/2, sqrt(2)), and
// fdlibm's polynomial in s = f / (2 + f), f = m - 1).
inline V log_ge1(V w) {
  VU ix = reinterpret_cast<VU>(w);
  V m;
  VI k;
  if constexpr (kF32) {
    ix += 0x3f800000u - 0x3f3504f3u;
    k = reinterpret_cast<VI>(ix >> 23) - 0x7f;
    ix = (ix & 0x007fffffu) + 0x3f3504f3u;
    m = reinterpret_cast<V>(ix);
  } else {
    VU hx = ix >> 32;
    hx += 0x3ff00000u - 0x3fe6a09eu;
    k = reinterpret_cast<VI>(hx >> 20) - 0x3ff;
    hx = (hx & 0x000fffffu) + 0x3fe6a09eu;
    ix = (hx << 32) | (ix & 0xffffffffu);
    m = reinterpret_cast<V>(ix);
  }
  const V f = m - splat(1);
  const V s = f / (splat(2) + f);
  const V z = s * s;
  const V ww = z * z;
  const V t1 = ww * (splat(T(3.999999999940941908e-01)) + ww * (splat(T(2.222219843214978396e-01)) + ww * splat(T(1.531383769920937332e-01))));
  const V t2 = z * (splat(T(6.666666666666735130e-01)) + ww * (splat(T(2.857142874366239149e-01)) + ww * (splat(T(1.818357216161805012e-01)) + ww * splat(T(1.479819860511658591e-01)))));
  const V R = t2 + t1;
  const V hfsq = splat(T(0.5)) * f * f;
  const V dk = __builtin_convertvector(k, V);
  return dk * splat(kLn2Hi) - ((hfsq - (s * (hfsq + R) + dk * splat(kLn2Lo))) - f);
}

// log1p(e) for e >= 0 (nan gives nan): log(1 + e) * e / ((1 + e) - 1), which corrects the
// rounding of 1 + e (Goldberg); e itself where 1 + e rounds to 1.
inline V log1p_pos(V e) {
  const V w = splat(1) + e;
  const V d = w - splat(1);
  const V safe_d = d == splat(0) ? splat(1) : d;
  const V l = log_ge1(w) * (e / safe_d);
  return d == splat(0) ? e : l;
}

struct P {
  V beta, thr;
};

inline V op(V x, const P& p) {
  const V t = x * p.beta;
  const V sp = log1p_pos(expv(t)) / p.beta;
  return t > p.thr ? x : sp;
}

// y[0..n) = op(x[0..n)), both contiguous.
void op_run(const T* x, T* y, int64_t n, const P& p) {
  int64_t i = 0;
  for (; i + L <= n; i += L) storev(y + i, op(loadv(x + i), p));
  if (i < n) {
    alignas(64) T buf[L] = {};
    std::memcpy(buf, x + i, static_cast<size_t>(n - i) * sizeof(T));
    storev(buf, op(loadv(buf), p));
    std::memcpy(y + i, buf, static_cast<size_t>(n - i) * sizeof(T));
  }
}

// x's shape after dropping size-1 dims and merging neighbours x allows (out is contiguous).
struct Layout {
  int nd = 0;
  int64_t size[OPGEN_MAX_DIMS];
  int64_t stride[OPGEN_MAX_DIMS];
};

Layout collapse(const opgen::Tensor& x) {
  Layout Lo;
  for (int d = 0; d < x.ndim(); ++d) {
    const int64_t n = x.size(d);
    if (n == 1) continue;
    if (Lo.nd > 0 && Lo.stride[Lo.nd - 1] == x.stride(d) * n) {
      Lo.size[Lo.nd - 1] *= n;
      Lo.stride[Lo.nd - 1] = x.stride(d);
      continue;
    }
    Lo.size[Lo.nd] = n;
    Lo.stride[Lo.nd] = x.stride(d);
    ++Lo.nd;
  }
  if (Lo.nd == 0) {
    Lo.nd = 1;
    Lo.size[0] = 1;
    Lo.stride[0] = 1;
  }
  return Lo;
}

// Elements [e0, e1) of out, a run of the last collapsed dim at a time.
void run_range(const T* X, T* Y, const Layout& Lo, int64_t e0, int64_t e1, const P& p) {
  const int last = Lo.nd - 1;
  const int64_t inner = Lo.size[last], s = Lo.stride[last];
  int64_t row = e0 / inner, col = e0 % inner;
  int64_t idx[OPGEN_MAX_DIMS] = {};
  int64_t off = 0;
  for (int d = last - 1; d >= 0; --d) {
    idx[d] = row % Lo.size[d];
    row /= Lo.size[d];
    off += idx[d] * Lo.stride[d];
  }
  alignas(64) T buf[kChunk];
  int64_t e = e0;
  while (e < e1) {
    const int64_t n = inner - col < e1 - e ? inner - col : e1 - e;
    const T* src = X + off + col * s;
    if (s == 1) {
      op_run(src, Y + e, n, p);
    } else {
      for (int64_t c = 0; c < n; c += kChunk) {
        const int64_t m = n - c < kChunk ? n - c : kChunk;
        for (int64_t j = 0; j < m; ++j) buf[j] = src[(c + j) * s];
        op_run(buf, Y + e + c, m, p);
      }
    }
    e += n;
    col = 0;
    for (int d = last - 1; d >= 0; --d) {
      if (++idx[d] < Lo.size[d]) {
        off += Lo.stride[d];
        break;
      }
      off -= Lo.stride[d] * (Lo.size[d] - 1);
      idx[d] = 0;
    }
  }
}

}  // namespace

void torch_nn_functional_softplus__f64(const opgen::Tensor& input, double beta, double threshold, opgen::Tensor& out) {
  const int64_t total = out.numel();
  if (total == 0) return;
  const P p{splat(static_cast<T>(beta)), splat(static_cast<T>(threshold))};
  const Layout Lo = collapse(input);
  const T* X = input.data<T>();
  T* Y = out.data<T>();
  int threads = 1;
#ifdef _OPENMP
  threads = omp_get_max_threads();
#endif
  const int64_t by_size = total / kPerThreadMin;
  threads = static_cast<int>(by_size < threads ? (by_size < 1 ? 1 : by_size) : threads);
  if (threads <= 1) {
    run_range(X, Y, Lo, 0, total, p);
    return;
  }
#pragma omp parallel num_threads(threads)
  {
    int t = 0, team = 1;
#ifdef _OPENMP
    t = omp_get_thread_num();
    team = omp_get_num_threads();
#endif
    const int64_t lo = (total * t / team) & ~int64_t(L - 1);
    const int64_t hi = t + 1 == team ? total : (total * (t + 1) / team) & ~int64_t(L - 1);
    if (lo < hi) run_range(X, Y, Lo, lo, hi, p);
  }
}

}  // namespace opgen::kernels
