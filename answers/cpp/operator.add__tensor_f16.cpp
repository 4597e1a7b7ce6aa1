// operator.add, overload tensor_f16: out = a + b elementwise, NumPy broadcasting, float16 (storage) with float32 arithmetic.
//
// The shim has already broadcast a and b to out's shape (stride 0 along broadcast dims), so
// every element is o[i...] = a[i...] + b[i...], one IEEE float32 addition of the widened values, rounded once to float16 (the build has no
// -ffast-math: nan, infinities, -0.0 and subnormals come out as IEEE says).
//
// Speed: dims of size 1 are dropped and neighbouring dims merged wherever both inputs allow
// it (out is contiguous), so a contiguous or row-broadcast operand becomes one long inner
// loop. The inner loop is specialised on the two inner strides (1/1, 1/0, 0/1, 0/0, other):
// with unit or zero strides it runs sixteen AVX-512 lanes at a time. Large outputs are split into equal element
// ranges across the OpenMP threads (a range may start and end mid-row).
#include "opgen_kernel.hpp"

// GCC 12's AVX-512 headers trip -Wmaybe-uninitialized on their own placeholders (GCC bug 105593).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <cstdint>
#include <immintrin.h>
#ifdef _OPENMP
#include <omp.h>
#endif

namespace opgen::kernels {

namespace {

using T = _Float16;
constexpr int64_t kPerThreadMin = 1 << 15;  // elements: below this a second thread costs more than it saves

// Widened to float32, added, rounded once to float16: the float16 nearest the exact sum.
inline T apply(T x, T y) { return static_cast<T>(static_cast<float>(x) + static_cast<float>(y)); }

// out's shape after dropping size-1 dims and merging neighbours, with both inputs' strides.
struct Layout {
  int nd = 0;
  int64_t size[OPGEN_MAX_DIMS];
  int64_t sa[OPGEN_MAX_DIMS];
  int64_t sb[OPGEN_MAX_DIMS];
};

Layout collapse(const opgen::Tensor& a, const opgen::Tensor& b, const opgen::Tensor& out) {
  Layout L;
  for (int d = 0; d < out.ndim(); ++d) {
    const int64_t n = out.size(d);
    if (n == 1) continue;
    if (L.nd > 0) {
      const int k = L.nd - 1;  // merge into the previous dim when both inputs step uniformly across
      if (L.sa[k] == a.stride(d) * n && L.sb[k] == b.stride(d) * n) {
        L.size[k] *= n;
        L.sa[k] = a.stride(d);
        L.sb[k] = b.stride(d);
        continue;
      }
    }
    L.size[L.nd] = n;
    L.sa[L.nd] = a.stride(d);
    L.sb[L.nd] = b.stride(d);
    ++L.nd;
  }
  if (L.nd == 0) {  // a single element
    L.nd = 1;
    L.size[0] = 1;
    L.sa[0] = L.sb[0] = 0;
  }
  return L;
}

#if defined(__AVX512F__)
// Sixteen float16 values widened (vcvtph2ps), combined in float32 and rounded back (vcvtps2ph, to
// nearest even): lane for lane what `apply` computes, since GCC compiles apply's conversions to the
// same instructions on one value. GCC 12 does not vectorise _Float16 loops without AVX512-FP16.
inline __m512 load16(const T* p) {
  return _mm512_maskz_cvtph_ps(0xffff, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
}
inline void store16(T* p, __m512 v) {
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), _mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
}
#endif

// o[0..n) = a[i*sa] + b[i*sb]; unit and zero strides run sixteen lanes at a time.
void segment(const T* __restrict pa, int64_t sa, const T* __restrict pb, int64_t sb, T* __restrict o, int64_t n) {
  int64_t i = 0;
  if (sa == 1 && sb == 1) {
#if defined(__AVX512F__)
    for (; i + 16 <= n; i += 16) store16(o + i, _mm512_add_ps(load16(pa + i), load16(pb + i)));
#endif
    for (; i < n; ++i) o[i] = apply(pa[i], pb[i]);
  } else if (sa == 1 && sb == 0) {
    const T y = pb[0];
#if defined(__AVX512F__)
    const __m512 vy = _mm512_set1_ps(static_cast<float>(y));
    for (; i + 16 <= n; i += 16) store16(o + i, _mm512_add_ps(load16(pa + i), vy));
#endif
    for (; i < n; ++i) o[i] = apply(pa[i], y);
  } else if (sa == 0 && sb == 1) {
    const T x = pa[0];
#if defined(__AVX512F__)
    const __m512 vx = _mm512_set1_ps(static_cast<float>(x));
    for (; i + 16 <= n; i += 16) store16(o + i, _mm512_add_ps(vx, load16(pb + i)));
#endif
    for (; i < n; ++i) o[i] = apply(x, pb[i]);
  } else if (sa == 0 && sb == 0) {
    const T v = apply(pa[0], pb[0]);
    for (; i < n; ++i) o[i] = v;
  } else {
    for (; i < n; ++i) o[i] = apply(pa[i * sa], pb[i * sb]);
  }
}

// Elements [e0, e1) of out (flat, row-major over L), rows of L's last dim at a time.
void run_range(const T* A, const T* B, T* O, const Layout& L, int64_t e0, int64_t e1) {
  const int last = L.nd - 1;
  const int64_t inner = L.size[last];
  int64_t row = e0 / inner, col = e0 % inner;
  int64_t idx[OPGEN_MAX_DIMS] = {};
  int64_t oa = 0, ob = 0;
  for (int d = last - 1; d >= 0; --d) {  // the multi-index of `row` over the outer dims
    idx[d] = row % L.size[d];
    row /= L.size[d];
    oa += idx[d] * L.sa[d];
    ob += idx[d] * L.sb[d];
  }
  int64_t e = e0;
  while (e < e1) {
    const int64_t n = inner - col < e1 - e ? inner - col : e1 - e;
    segment(A + oa + col * L.sa[last], L.sa[last], B + ob + col * L.sb[last], L.sb[last], O + e, n);
    e += n;
    col = 0;
    for (int d = last - 1; d >= 0; --d) {  // next row
      if (++idx[d] < L.size[d]) {
        oa += L.sa[d];
        ob += L.sb[d];
        break;
      }
      oa -= L.sa[d] * (L.size[d] - 1);
      ob -= L.sb[d] * (L.size[d] - 1);
      idx[d] = 0;
    }
  }
}

}  // namespace

void operator_add__tensor_f16(const opgen::Tensor& a, const opgen::Tensor& b, opgen::Tensor& out) {
  const int64_t total = out.numel();
  if (total == 0) return;
  const Layout L = collapse(a, b, out);
  const T* A = a.data<T>();
  const T* B = b.data<T>();
  T* O = out.data<T>();
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
    // Equal ranges, their bounds rounded to 16 elements (whole cache lines of out where aligned).
    const int64_t lo = (total * t / team) & ~int64_t(15), hi = t + 1 == team ? total : (total * (t + 1) / team) & ~int64_t(15);
    if (lo < hi) run_range(A, B, O, L, lo, hi);
  }
}

}  // namespace opgen::kernels
