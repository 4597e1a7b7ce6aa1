// torch.nn.functional.silu, overload f64: out[i] = x / (1 + exp(-x)) for x = input[i], in float64.
//
// The formula PyTorch evaluates (x * sigmoid(x) with one rounding fewer), eight lanes at a
// time with GCC vector code:
//   - exp(t), t = -x, table-driven in the style of glibc / ARM optimized-routines:
//     k = round(t * 16/ln2), r = t - k ln2/16 (two-part ln2, |r| <= ln2/32),
//     exp(t) = 2^(k>>4) * H[k&15] * (1 + T[k&15] + (exp(r) - 1)), H[j] = 2^(j/16) rounded to
//     double and T[j] its relative correction, exp(r) - 1 by its degree-7 Taylor polynomial
//     (truncation < 2^-59): about 0.53 ulp. 2^(k>>4) is applied exactly: AVX-512's scalef
//     where the machine has it (the table lookups are then register permutes), otherwise
//     two powers of two built in the exponent bits;
//   - then one addition and one correctly rounded division of x: within about 1.5 ulps of
//     x * sigmoid(x) (1 + e has no cancellation: e > 0).
// Edges, as in PyTorch: for x below about -709.78, exp(-x) overflows to inf and the result is
// x / inf = -0.0 (the true value there is at most 4e-306 in magnitude); -inf gives
// -inf / inf = nan, +inf gives +inf, -0.0 gives -0.0, subnormal x give x / 2 (no flush).
// t is clamped to [-40, 710]: below -40, exp(t) < 2^-57 cannot move 1 + e off 1; above 710,
// exp(t) is inf anyway. nan fails both clamps and gives nan.
//
// out is contiguous with x's shape; x may be strided (any strides, 0 and negative included).
// Size-1 dims are dropped and neighbours merged where x allows, so a contiguous x is one
// flat run; strided runs are gathered into a small buffer first. Large tensors are split
// across OpenMP threads in vector-aligned blocks of out.
#include "opgen_kernel.hpp"

#include <cstdint>
#include <cstring>
#if defined(__AVX512F__)
#include <immintrin.h>
#endif
#ifdef _OPENMP
#include <omp.h>
#endif

namespace opgen::kernels {

namespace {

#pragma GCC diagnostic ignored "-Wpsabi"  // the vector types never cross a library boundary

using T = double;
constexpr int L = 8;
typedef double vd __attribute__((vector_size(64)));
typedef int64_t vl __attribute__((vector_size(64)));
typedef uint64_t vu __attribute__((vector_size(64)));
constexpr int64_t kPerThreadMin = 1 << 15;  // elements per thread below which a team costs more than it saves
constexpr int64_t kChunk = 1024;           // gather buffer for strided runs (a multiple of L)

// kH[j] = 2^(j/16) rounded to double; kT[j] = 2^(j/16) / kH[j] - 1 (200-bit arithmetic).
alignas(64) static const double kH[16] = {
    0x1.0000000000000p+0, 0x1.0b5586cf9890fp+0, 0x1.172b83c7d517bp+0, 0x1.2387a6e756238p+0,
    0x1.306fe0a31b715p+0, 0x1.3dea64c123422p+0, 0x1.4bfdad5362a27p+0, 0x1.5ab07dd485429p+0,
    0x1.6a09e667f3bcdp+0, 0x1.7a11473eb0187p+0, 0x1.8ace5422aa0dbp+0, 0x1.9c49182a3f090p+0,
    0x1.ae89f995ad3adp+0, 0x1.c199bdd85529cp+0, 0x1.d5818dcfba487p+0, 0x1.ea4afa2a490dap+0,
};
alignas(64) static const double kT[16] = {
    0.0, 0x1.79aa65d837b6dp-54, -0x1.01b15eaa59348p-55, 0x1.68efde3a8a894p-54,
    0x1.34d754db0abb6p-55, 0x1.59f48a72a4c6dp-55, 0x1.690cebb7aafb0p-56, 0x1.063e1e21c5409p-54,
    -0x1.3b3efbf5e2228p-54, -0x1.b32dcb94da51dp-56, 0x1.db72fc1f0eab4p-55, 0x1.1affc2b91ce27p-56,
    0x1.c1a7792cb3387p-55, 0x1.36eae30af0cb3p-56, 0x1.4a385a63d07a7p-56, -0x1.ff7128fd391f0p-55,
};

inline vd splat(double v) { return vd{} + v; }

inline vd loadv(const T* p) {
  vd v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
inline void storev(T* p, vd v) { std::memcpy(p, &v, sizeof v); }

#if !defined(__AVX512F__)
inline vd pow2i(vl e) {  // 2^e for e in [-1022, 1023], exactly
  return reinterpret_cast<vd>((e + 1023) << 52);
}
#endif

// exp(t) for t in [-40, 710] (nan passes through): inf above ~709.78.
inline vd expv(vd t) {
  t = t > splat(710.0) ? splat(710.0) : t;
  t = t < splat(-40.0) ? splat(-40.0) : t;  // nan compares false and passes both clamps unchanged
  const vd shift = splat(0x1.8p52);  // 1.5 * 2^52: k lands in the low mantissa bits
  vd kd = t * splat(0x1.71547652b82fep+4) + shift;  // t * 16/ln2
  const vu kbits = reinterpret_cast<vu>(kd);
  kd -= shift;
  const vd r = (t - kd * splat(0x1.62e42fefa0000p-5)) - kd * splat(0x1.cf79abc9e3b3ap-44);  // ln2/16 in two parts
  const vu idx = kbits & 15u;
  // The low 52 bits hold 2^51 + k; k >> 4 by an arithmetic shift (a nan lane gives k = 0).
  const vl k = reinterpret_cast<vl>(kbits & ((uint64_t(1) << 52) - 1)) - (int64_t(1) << 51);
  const vl m = k >> 4;
  vd h, tc;
#if defined(__AVX512F__)
  {
    __m512d h0, h1, t0, t1;
    std::memcpy(&h0, kH, 64);
    std::memcpy(&h1, kH + 8, 64);
    std::memcpy(&t0, kT, 64);
    std::memcpy(&t1, kT + 8, 64);
    h = reinterpret_cast<vd>(_mm512_permutex2var_pd(h0, reinterpret_cast<__m512i>(idx), h1));
    tc = reinterpret_cast<vd>(_mm512_permutex2var_pd(t0, reinterpret_cast<__m512i>(idx), t1));
  }
#else
  for (int l = 0; l < L; ++l) {
    h[l] = kH[idx[l]];
    tc[l] = kT[idx[l]];
  }
#endif
  const vd r2 = r * r;
  const vd r4 = r2 * r2;
  // exp(r) - 1 = r + r2 (1/2 + r/6) + r4 (1/24 + r/120 + r2 (1/720 + r/5040))
  const vd p = r + r2 * (splat(0.5) + r * splat(1.0 / 6.0)) +
               r4 * ((splat(1.0 / 24.0) + r * splat(1.0 / 120.0)) + r2 * (splat(1.0 / 720.0) + r * splat(1.0 / 5040.0)));
  const vd y = h + h * (tc + p);  // exp(t) / 2^(k>>4), in [0.97, 2.06]
#if defined(__AVX512F__)
  return reinterpret_cast<vd>(_mm512_scalef_pd(reinterpret_cast<__m512d>(y),
                                               reinterpret_cast<__m512d>(__builtin_convertvector(m, vd))));
#else
  const vl m1 = m >> 1;  // m in [-58, 1024]: two halves, each a normal power of two
  return y * pow2i(m1) * pow2i(m - m1);
#endif
}

inline vd op(vd x) { return x / (splat(1.0) + expv(-x)); }

// y[0..n) = silu(x[0..n)), both contiguous.
void op_run(const T* x, T* y, int64_t n) {
  int64_t i = 0;
  for (; i + L <= n; i += L) storev(y + i, op(loadv(x + i)));
  if (i < n) {
    alignas(64) T buf[L] = {};
    std::memcpy(buf, x + i, static_cast<size_t>(n - i) * sizeof(T));
    storev(buf, op(loadv(buf)));
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
void run_range(const T* X, T* Y, const Layout& Lo, int64_t e0, int64_t e1) {
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
      op_run(src, Y + e, n);
    } else {
      for (int64_t c = 0; c < n; c += kChunk) {
        const int64_t m = n - c < kChunk ? n - c : kChunk;
        for (int64_t j = 0; j < m; ++j) buf[j] = src[(c + j) * s];
        op_run(buf, Y + e + c, m);
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

void torch_nn_functional_silu__f64(const opgen::Tensor& input, opgen::Tensor& out) {
  const int64_t total = out.numel();
  if (total == 0) return;
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
    run_range(X, Y, Lo, 0, total);
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
    if (lo < hi) run_range(X, Y, Lo, lo, hi);
  }
}

}  // namespace opgen::kernels
