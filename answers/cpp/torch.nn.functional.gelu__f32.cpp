// torch.nn.functional.gelu, overload f32: GELU, exact ("none") or tanh-approximated ("tanh").
//
//   none: y = x * 0.5 * (1 + erf(x / sqrt(2)))
//   tanh: y = 0.5 * x * (1 + tanh(u)) with u = sqrt(2/pi) * (x + 0.044715 x^3)
//
// Both in float32 with sixteen-lane GCC vector code (AVX-512 where the machine has it):
//   - erf is Abramowitz & Stegun 7.1.26, erf(z) = 1 - t P(t) exp(-z^2) with t = 1/(1 + p|z|),
//     absolute error below 1.5e-7: the approximation PyTorch's vectorised CPU erf uses, so the
//     cancellation in 1 + erf for negative x (absolute error ~1e-7 |x|; results far below
//     that become -0.0) behaves as the reference's does;
//   - the tanh form is evaluated as x / (1 + exp(-2u)) (the same function: 0.5 (1 + tanh u)
//     is the logistic of 2u), which has no cancellation: negative x keep a few-ulp relative
//     error where PyTorch's 1 + tanh(u) rounds to a few ulps of 1, or to 0;
//   - exp is a Cephes-style range reduction (x = n ln2 + r, |r| <= ln2/2), a degree-6
//     polynomial, and 2^n applied exactly (two powers of two in the tanh form, so subnormal
//     results are right; one, or AVX-512's scalef, for exp(-z^2) in the erf form, where
//     arguments below -87 cannot move 1 - t P(t) exp(-z^2) off 1);
//   - with AVX-512 the erf form's 1 / (1 + p|z|) is the hardware estimate plus one Newton
//     step (relative error ~1e-8) instead of a division: the loop is arithmetic-bound.
// -inf gives nan (-inf * 0) in both forms, nan stays nan, -0.0 gives -0.0, +inf gives inf.
// Any other `approximate` throws ValueError.
//
// out is contiguous with x's shape; x may be strided. Dims of size 1 are dropped and
// neighbours merged where x allows, so a contiguous x is one flat run; strided runs are
// gathered into a small buffer first. Large tensors are split across OpenMP threads.
#include "opgen_kernel.hpp"

#include <cstdint>
#include <cstring>
#include <string>
#if defined(__AVX512F__)
#include <immintrin.h>
#endif
#ifdef _OPENMP
#include <omp.h>
#endif

namespace opgen::kernels {

namespace {

#pragma GCC diagnostic ignored "-Wpsabi"  // the vector types never cross a library boundary

using T = float;
constexpr int L = 16;
typedef float vf __attribute__((vector_size(64)));
typedef int32_t vi __attribute__((vector_size(64)));
constexpr int64_t kPerThreadMin = 1 << 14;  // elements per thread below which threads cost more than they save
constexpr int64_t kChunk = 1024;           // gather buffer for strided runs (a multiple of L)

inline vf splat(float v) { return vf{} + v; }

inline vf loadv(const T* p) {
  vf v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
inline void storev(T* p, vf v) { std::memcpy(p, &v, sizeof v); }

inline vf pow2i(vi e) {  // 2^e for e in [-126, 127], exactly
  const vi bits = (e + 127) << 23;
  vf r;
  std::memcpy(&r, &bits, sizeof r);
  return r;
}

// exp(x), sixteen lanes: nan stays nan, large arguments overflow to inf, very negative ones
// reach 0 through the subnormals.
inline vf expv(vf x) {
  const vf hi = splat(100.0f), lo = splat(-110.0f);
  x = x > hi ? hi : x;
  x = x < lo ? lo : x;  // nan compares false and passes both clamps unchanged
  const vf magic = splat(12582912.0f);  // 1.5 * 2^23: adding and subtracting it rounds to an integer
  vf n = (x * splat(1.44269504088896341f) + magic) - magic;
  const vf r = (x - n * splat(0.693359375f)) - n * splat(-2.12194440e-4f);
  vf p = splat(1.9875691500e-4f);
  p = p * r + splat(1.3981999507e-3f);
  p = p * r + splat(8.3334519073e-3f);
  p = p * r + splat(4.1665795894e-2f);
  p = p * r + splat(1.6666665459e-1f);
  p = p * r + splat(5.0000001201e-1f);
  p = p * (r * r) + r + splat(1.0f);
  n = n == n ? n : splat(0.0f);  // (a nan lane keeps p = nan; keep the conversion defined)
  const vi e = __builtin_convertvector(n, vi);  // in [-159, 145]: split in two halves
  const vi e1 = e >> 1;
  return p * pow2i(e1) * pow2i(e - e1);
}

// exp(v) for v <= 0 (nan passes through): clamped at -87, where exp is still a normal float,
// so 2^n is one power of two. Used for exp(-z^2), whose contribution to erf is far below
// an ulp of 1 long before z^2 reaches 87. With AVX-512, rounding is one roundscale and
// p * 2^n one scalef.
inline vf exp_nonpositive(vf x) {
  const vf lo = splat(-87.0f);
  x = x < lo ? lo : x;
#if defined(__AVX512F__)
  const vf n = reinterpret_cast<vf>(_mm512_roundscale_ps(reinterpret_cast<__m512>(x * splat(1.44269504088896341f)),
                                                         _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
#else
  const vf magic = splat(12582912.0f);
  vf n = (x * splat(1.44269504088896341f) + magic) - magic;
#endif
  const vf r = (x - n * splat(0.693359375f)) - n * splat(-2.12194440e-4f);
  vf p = splat(1.9875691500e-4f);
  p = p * r + splat(1.3981999507e-3f);
  p = p * r + splat(8.3334519073e-3f);
  p = p * r + splat(4.1665795894e-2f);
  p = p * r + splat(1.6666665459e-1f);
  p = p * r + splat(5.0000001201e-1f);
  p = p * (r * r) + r + splat(1.0f);
#if defined(__AVX512F__)
  return reinterpret_cast<vf>(_mm512_scalef_ps(reinterpret_cast<__m512>(p), reinterpret_cast<__m512>(n)));
#else
  const vf m = n == n ? n : splat(0.0f);
  return p * pow2i(__builtin_convertvector(m, vi));
#endif
}

// 1 / d for d >= 1: the hardware estimate refined by one Newton step (relative error ~1e-8)
// where AVX-512 has one, a division elsewhere.
inline vf reciprocal(vf d) {
#if defined(__AVX512F__)
  const vf e = reinterpret_cast<vf>(_mm512_rcp14_ps(reinterpret_cast<__m512>(d)));
  return e * (splat(2.0f) - d * e);
#else
  return splat(1.0f) / d;
#endif
}

inline vf gelu_erf(vf x) {
  const vf z = x * splat(0.70710678118654752f);
  const vi sign = reinterpret_cast<vi>(z) & vi{} + static_cast<int32_t>(0x80000000u);
  const vf az = reinterpret_cast<vf>(reinterpret_cast<vi>(z) ^ sign);
  vf d = splat(0.3275911f) * az + splat(1.0f);
  d = d > splat(1e30f) ? splat(1e30f) : d;  // (so |x| = inf gives t = 1e-30, not 0 * inf in the Newton step)
  const vf t = reciprocal(d);
  vf r = splat(1.061405429f);
  r = r * t + splat(-1.453152027f);
  r = r * t + splat(1.421413741f);
  r = r * t + splat(-0.284496736f);
  r = r * t + splat(0.254829592f);
  const vf erf_abs = splat(1.0f) - t * r * exp_nonpositive(-(z * z));
  const vf erf = reinterpret_cast<vf>(reinterpret_cast<vi>(erf_abs) ^ sign);
  const vf hx = x * splat(0.5f);
  return hx * (splat(1.0f) + erf);  // (not hx * erf + hx: that loses the sign of a -0.0 result)
}

inline vf gelu_tanh(vf x) {
  const vf u = splat(0.79788456080286536f) * (x + splat(0.044715f) * (x * x * x));
  return x / (splat(1.0f) + expv(splat(-2.0f) * u));
}

// y[0..n) = gelu(x[0..n)), both contiguous.
template <bool kTanh>
void gelu_run(const T* x, T* y, int64_t n) {
  int64_t i = 0;
  for (; i + L <= n; i += L) {
    const vf v = loadv(x + i);
    storev(y + i, kTanh ? gelu_tanh(v) : gelu_erf(v));
  }
  if (i < n) {
    alignas(64) T buf[L] = {};
    std::memcpy(buf, x + i, static_cast<size_t>(n - i) * sizeof(T));
    const vf v = loadv(buf);
    storev(buf, kTanh ? gelu_tanh(v) : gelu_erf(v));
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

// Elements [e0, e1) of out, runs of the last collapsed dim at a time.
template <bool kTanh>
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
      gelu_run<kTanh>(src, Y + e, n);
    } else {
      for (int64_t c = 0; c < n; c += kChunk) {
        const int64_t m = n - c < kChunk ? n - c : kChunk;
        for (int64_t j = 0; j < m; ++j) buf[j] = src[(c + j) * s];
        gelu_run<kTanh>(buf, Y + e + c, m);
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

void torch_nn_functional_gelu__f32(const opgen::Tensor& input, const std::string& approximate, opgen::Tensor& out) {
  const bool tanh_form = approximate == "tanh";
  if (!tanh_form && approximate != "none")
    throw opgen::Error(opgen::ErrorKind::Value, "approximate argument must be either none or tanh");
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
#pragma omp parallel num_threads(threads) if (threads > 1)
  {
    int t = 0, team = 1;
#ifdef _OPENMP
    t = omp_get_thread_num();
    team = omp_get_num_threads();
#endif
    const int64_t lo = (total * t / team) & ~int64_t(L - 1);
    const int64_t hi = t + 1 == team ? total : (total * (t + 1) / team) & ~int64_t(L - 1);
    if (lo < hi) {
      if (tanh_form) {
        run_range<true>(X, Y, Lo, lo, hi);
      } else {
        run_range<false>(X, Y, Lo, lo, hi);
      }
    }
  }
}

}  // namespace opgen::kernels
