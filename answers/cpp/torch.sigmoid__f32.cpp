// torch.sigmoid, overload f32: out[i] = 1 / (1 + exp(-x[i])), in float32.
//
// The formula PyTorch evaluates, with sixteen-lane GCC vector code:
//   - exp(t), t = -x, by a Cephes-style range reduction (t = n ln2 + r, |r| <= ln2/2, ln2 in
//     two parts so n ln2 is exact), the degree-6 minimax polynomial of Cephes' expf (within
//     about 1 ulp), and 2^n applied exactly: AVX-512's scalef where the machine has it (it
//     overflows to inf and rounds into the subnormals correctly), otherwise two powers of two
//     built in the exponent bits (n in [-126, 128] needs two);
//   - then one addition and one correctly rounded division, so the result is within about
//     2 ulps of the logistic function for every x (1 + e has no cancellation: e > 0).
// Edges, as in PyTorch: for x below about -88.72, exp(-x) overflows to inf and the result is
// +0.0 (the true value is a subnormal there, <= 2.9e-39); between -88.72 and -87.3 the
// division yields the subnormal results PyTorch's does. t is clamped to [-88, 100]: below
// -88, exp(t) < 2^-126 cannot move 1 + e off 1; above 100, exp(t) is inf in float32 anyway.
// nan fails both clamps, stays nan and gives nan; +inf gives 1, -inf gives 0, -0.0 gives 0.5.
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

using T = float;
constexpr int L = 16;
typedef float vf __attribute__((vector_size(64)));
typedef int32_t vi __attribute__((vector_size(64)));
constexpr int64_t kPerThreadMin = 1 << 15;  // elements per thread below which a team costs more than it saves
constexpr int64_t kChunk = 1024;           // gather buffer for strided runs (a multiple of L)

inline vf splat(float v) { return vf{} + v; }

inline vf loadv(const T* p) {
  vf v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
inline void storev(T* p, vf v) { std::memcpy(p, &v, sizeof v); }

#if !defined(__AVX512F__)
inline vf pow2i(vi e) {  // 2^e for e in [-126, 127], exactly
  const vi bits = (e + 127) << 23;
  vf r;
  std::memcpy(&r, &bits, sizeof r);
  return r;
}
#endif

// exp(t) for t in [-88, 100] (nan passes through): inf above ~88.72.
inline vf expv(vf t) {
  const vf hi = splat(100.0f), lo = splat(-88.0f);
  t = t > hi ? hi : t;
  t = t < lo ? lo : t;  // nan compares false and passes both clamps unchanged
#if defined(__AVX512F__)
  const vf n = reinterpret_cast<vf>(_mm512_roundscale_ps(reinterpret_cast<__m512>(t * splat(1.44269504088896341f)),
                                                         _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
#else
  const vf magic = splat(12582912.0f);  // 1.5 * 2^23: adding and subtracting it rounds to an integer
  const vf n = (t * splat(1.44269504088896341f) + magic) - magic;
#endif
  const vf r = (t - n * splat(0.693359375f)) - n * splat(-2.12194440e-4f);
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
  const vf m = n == n ? n : splat(0.0f);  // (a nan lane keeps p = nan; keep the conversion defined)
  const vi e = __builtin_convertvector(m, vi);  // in [-127, 145]: split in two halves
  const vi e1 = e >> 1;
  return p * pow2i(e1) * pow2i(e - e1);
#endif
}

inline vf op(vf x) { return splat(1.0f) / (splat(1.0f) + expv(-x)); }

// y[0..n) = sigmoid(x[0..n)), both contiguous.
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

void torch_sigmoid__f32(const opgen::Tensor& input, opgen::Tensor& out) {
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
