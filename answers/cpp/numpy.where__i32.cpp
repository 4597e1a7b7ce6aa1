// numpy.where, overload i32: out = condition ? x : y elementwise, NumPy broadcasting, int32.
//
// The shim has already broadcast condition, x and y to out's shape (stride 0 along broadcast
// dims), so every element is out[i...] = condition[i...] ? x[i...] : y[i...]: a copy of one
// input element (bits and all: -0.0, nan payloads and subnormals are kept). condition is a bool
// tensor, one byte per element holding exactly 0 or 1 (the shim checks it).
//
// Speed: dims of size 1 are dropped and neighbouring dims merged wherever all three inputs
// allow it (out is contiguous), so contiguous or row-broadcast operands become one long inner
// loop. The inner loop is a branch-free select specialised on the three inner strides being
// unit or zero (a 0-d x or y, such as a -inf fill, or a broadcast mask row), which GCC
// vectorises; other strides take a general loop. Large outputs are split into equal element
// ranges across the OpenMP threads.
#include "opgen_kernel.hpp"

#include <cstdint>
#ifdef _OPENMP
#include <omp.h>
#endif

namespace opgen::kernels {

namespace {

using T = int32_t;
constexpr int64_t kPerThreadMin = 1 << 16;  // elements: below this a second thread costs more than it saves

struct Layout {
  int nd = 0;
  int64_t size[OPGEN_MAX_DIMS];
  int64_t s[3][OPGEN_MAX_DIMS];  // condition, x, y
};

Layout collapse(const opgen::Tensor* in[3], const opgen::Tensor& out) {
  Layout L;
  for (int d = 0; d < out.ndim(); ++d) {
    const int64_t n = out.size(d);
    if (n == 1) continue;
    if (L.nd > 0) {
      const int k = L.nd - 1;
      bool merge = true;
      for (int t = 0; t < 3; ++t) merge = merge && L.s[t][k] == in[t]->stride(d) * n;
      if (merge) {
        L.size[k] *= n;
        for (int t = 0; t < 3; ++t) L.s[t][k] = in[t]->stride(d);
        continue;
      }
    }
    L.size[L.nd] = n;
    for (int t = 0; t < 3; ++t) L.s[t][L.nd] = in[t]->stride(d);
    ++L.nd;
  }
  if (L.nd == 0) {
    L.nd = 1;
    L.size[0] = 1;
    for (int t = 0; t < 3; ++t) L.s[t][0] = 0;
  }
  return L;
}

template <int SC, int SX, int SY>  // 1: unit stride, 0: broadcast (stride 0)
inline void select_fixed(const bool* __restrict c, const T* __restrict x, const T* __restrict y, T* __restrict o, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const bool k = c[SC * i];
    o[i] = k ? x[SX * i] : y[SY * i];
  }
}

void segment(const bool* c, int64_t sc, const T* x, int64_t sx, const T* y, int64_t sy, T* o, int64_t n) {
  const int key = (sc == 1 ? 0 : sc == 0 ? 1 : 2) * 9 + (sx == 1 ? 0 : sx == 0 ? 1 : 2) * 3 + (sy == 1 ? 0 : sy == 0 ? 1 : 2);
  switch (key) {
    case 0: return select_fixed<1, 1, 1>(c, x, y, o, n);
    case 1: return select_fixed<1, 1, 0>(c, x, y, o, n);
    case 3: return select_fixed<1, 0, 1>(c, x, y, o, n);
    case 4: return select_fixed<1, 0, 0>(c, x, y, o, n);
    case 9: return select_fixed<0, 1, 1>(c, x, y, o, n);
    case 10: return select_fixed<0, 1, 0>(c, x, y, o, n);
    case 12: return select_fixed<0, 0, 1>(c, x, y, o, n);
    case 13: return select_fixed<0, 0, 0>(c, x, y, o, n);
    default:
      for (int64_t i = 0; i < n; ++i) o[i] = c[i * sc] ? x[i * sx] : y[i * sy];
  }
}

void run_range(const bool* C, const T* X, const T* Y, T* O, const Layout& L, int64_t e0, int64_t e1) {
  const int last = L.nd - 1;
  const int64_t inner = L.size[last];
  int64_t row = e0 / inner, col = e0 % inner;
  int64_t idx[OPGEN_MAX_DIMS] = {};
  int64_t off[3] = {0, 0, 0};
  for (int d = last - 1; d >= 0; --d) {
    idx[d] = row % L.size[d];
    row /= L.size[d];
    for (int t = 0; t < 3; ++t) off[t] += idx[d] * L.s[t][d];
  }
  int64_t e = e0;
  while (e < e1) {
    const int64_t n = inner - col < e1 - e ? inner - col : e1 - e;
    segment(C + off[0] + col * L.s[0][last], L.s[0][last], X + off[1] + col * L.s[1][last], L.s[1][last],
            Y + off[2] + col * L.s[2][last], L.s[2][last], O + e, n);
    e += n;
    col = 0;
    for (int d = last - 1; d >= 0; --d) {
      if (++idx[d] < L.size[d]) {
        for (int t = 0; t < 3; ++t) off[t] += L.s[t][d];
        break;
      }
      for (int t = 0; t < 3; ++t) off[t] -= L.s[t][d] * (L.size[d] - 1);
      idx[d] = 0;
    }
  }
}

}  // namespace

void numpy_where__i32(const opgen::Tensor& condition, const opgen::Tensor& x, const opgen::Tensor& y, opgen::Tensor& out) {
  const int64_t total = out.numel();
  if (total == 0) return;
  const opgen::Tensor* in[3] = {&condition, &x, &y};
  const Layout L = collapse(in, out);
  const bool* C = condition.data<bool>();
  const T* X = x.data<T>();
  const T* Y = y.data<T>();
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
    const int64_t lo = (total * t / team) & ~int64_t(15), hi = t + 1 == team ? total : (total * (t + 1) / team) & ~int64_t(15);
    if (lo < hi) run_range(C, X, Y, O, L, lo, hi);
  }
}

}  // namespace opgen::kernels
