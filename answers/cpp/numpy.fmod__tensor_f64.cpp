// numpy.fmod, overload tensor_f64: out = fmod(a, b) elementwise, NumPy broadcasting, float64.
//
// C's fmod: the remainder of truncating division, with the dividend's sign, computed exactly
// (no rounding): fmod(-7, 2) is -1, fmod(7, -2) is 1, fmod(-0.0, 3) is -0.0, fmod(5, inf) is 5,
// fmod(inf, y), fmod(x, 0) and anything with nan are nan. The loops (layouts, broadcasting, threads)
// are operator.mod's; only the rule per element differs.
#include "opgen_kernel.hpp"

#include <cmath>
#include <cstdint>
#ifdef _OPENMP
#include <omp.h>
#endif

namespace opgen::kernels {

namespace {

using T = double;
constexpr int64_t kPerThreadMin = 1 << 13;  // elements: below this a second thread costs more than it saves

// fmod(a, b), exactly, without glibc's fmod (a bit-at-a-time loop in glibc 2.36: ~200 ns a call)
// wherever the quotient is below 2**28 (float) / 2**51 (double): q = trunc(a / b) is then the
// truncated quotient or one off, and r = a - q * b is exact (float: in double, q * b has at most
// 52 bits; double: one fma of a residual smaller than 2|b|, a multiple of b's or a's ulp), so
// moving q by one where r's sign or size is wrong gives fmod exactly. Infinities, nan, a zero
// divisor and huge quotients fail the range test and take std::fmod.
inline float fmod_exact(float a, float b) {
  const double da = a, db = b;
  const double q = std::trunc(da / db);
  if (!(std::fabs(q) < 0x1p28)) return std::fmod(a, b);
  if (q == 0.0) return a;  // |a| < |b| (b = +-inf included, where q * b would be nan)
  double r = da - q * db;  // exact
  const double mb = std::fabs(db), s = std::copysign(mb, da);
  if (r != 0.0 && ((r < 0.0) != (da < 0.0))) r += s;  // q one too large in magnitude
  else if (std::fabs(r) >= mb) r -= s;                 // q one too small
  return r == 0.0 ? std::copysign(0.0f, a) : static_cast<float>(r);  // fmod is exact: r is a float
}
inline double fmod_exact(double a, double b) {
  double q = std::trunc(a / b);
  if (!(std::fabs(q) < 0x1p51)) return std::fmod(a, b);
  if (q == 0.0) return a;  // |a| < |b| (b = +-inf included, where fma(-q, b, a) would be nan)
  double r = std::fma(-q, b, a);  // exact unless the residual is in [|b|, 2|b|), fixed below
  const double one = std::copysign(1.0, a) * std::copysign(1.0, b);  // the sign of the quotient
  if (r != 0.0 && ((r < 0.0) != (a < 0.0))) {
    q -= one;
    r = std::fma(-q, b, a);  // now in [0, |b|) with a's sign: exact
  } else if (std::fabs(r) >= std::fabs(b)) {
    q += one;
    r = std::fma(-q, b, a);
  }
  return r == 0.0 ? std::copysign(0.0, a) : r;
}

// C's fmod, exactly (fmod_exact above; nan for a zero divisor).
inline T apply(T a, T b) { return fmod_exact(a, b); }

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

// o[0..n) = f(pa[i*sa], pb[i*sb]); the common stride pairs get loops GCC vectorises.
void segment(const T* __restrict pa, int64_t sa, const T* __restrict pb, int64_t sb, T* __restrict o, int64_t n) {
  if (sa == 1 && sb == 1) {
    for (int64_t i = 0; i < n; ++i) o[i] = apply(pa[i], pb[i]);
  } else if (sa == 1 && sb == 0) {
    const T y = pb[0];
    for (int64_t i = 0; i < n; ++i) o[i] = apply(pa[i], y);
  } else if (sa == 0 && sb == 1) {
    const T x = pa[0];
    for (int64_t i = 0; i < n; ++i) o[i] = apply(x, pb[i]);
  } else if (sa == 0 && sb == 0) {
    const T v = apply(pa[0], pb[0]);
    for (int64_t i = 0; i < n; ++i) o[i] = v;
  } else {
    for (int64_t i = 0; i < n; ++i) o[i] = apply(pa[i * sa], pb[i * sb]);
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

void numpy_fmod__tensor_f64(const opgen::Tensor& a, const opgen::Tensor& b, opgen::Tensor& out) {
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
