// torch.nn.functional.leaky_relu, overload f64: out[i] = x > 0 ? x : x * slope, x = input[i].
//
// Exactly PyTorch's CPU kernel: the product is one double multiply, so the result is bit for
// bit the reference's. nan fails the comparison and gives nan * slope = nan; -0.0 and +0.0
// take the product (-0.0 for a positive slope, and +0.0 * a negative slope is -0.0); -inf
// gives -inf * slope (nan for slope 0); +inf is kept; subnormal products are kept (no flush).
// The contiguous loop is a compare, a multiply and a blend in GCC vector code, four cache
// lines a step.
//
// out is contiguous with input's shape; input may be strided (any strides, 0 and negative
// included). Size-1 dims are dropped and neighbours merged where input allows, so a contiguous
// input is one flat run; strided runs are gathered into a small buffer. Large tensors are
// split across OpenMP threads in vector-aligned blocks of out.
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
constexpr int64_t kPerThreadMin = 1 << 16;  // elements per thread below which a team costs more than it saves
constexpr int64_t kChunk = 1024;           // gather buffer for strided runs
constexpr int64_t kAlign = 64;             // thread blocks start at multiples of this many elements

typedef T vec __attribute__((vector_size(64)));  // one cache line: 8 doubles
constexpr int64_t kLanes = 64 / sizeof(T);

// y[0..n) = leaky_relu(x[0..n)), both contiguous, four cache lines per step (measured a few
// percent faster than one on this streaming loop; prefetching out for writing, which helps the
// float32 kernel, made the float64 one slower).
void leaky_run(const T* __restrict x, T* __restrict y, int64_t n, T slope) {
  int64_t i = 0;
  for (; i + 4 * kLanes <= n; i += 4 * kLanes) {
    vec v0, v1, v2, v3;
    std::memcpy(&v0, x + i + 0 * kLanes, sizeof(vec));
    std::memcpy(&v1, x + i + 1 * kLanes, sizeof(vec));
    std::memcpy(&v2, x + i + 2 * kLanes, sizeof(vec));
    std::memcpy(&v3, x + i + 3 * kLanes, sizeof(vec));
    v0 = v0 > T(0) ? v0 : v0 * slope;
    v1 = v1 > T(0) ? v1 : v1 * slope;
    v2 = v2 > T(0) ? v2 : v2 * slope;
    v3 = v3 > T(0) ? v3 : v3 * slope;
    std::memcpy(y + i + 0 * kLanes, &v0, sizeof(vec));
    std::memcpy(y + i + 1 * kLanes, &v1, sizeof(vec));
    std::memcpy(y + i + 2 * kLanes, &v2, sizeof(vec));
    std::memcpy(y + i + 3 * kLanes, &v3, sizeof(vec));
  }
  for (; i < n; ++i) {
    const T v = x[i];
    y[i] = v > T(0) ? v : v * slope;
  }
}

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
void run_range(const T* X, T* Y, const Layout& Lo, int64_t e0, int64_t e1, T slope) {
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
      leaky_run(src, Y + e, n, slope);
    } else {
      for (int64_t c = 0; c < n; c += kChunk) {
        const int64_t m = n - c < kChunk ? n - c : kChunk;
        for (int64_t j = 0; j < m; ++j) buf[j] = src[(c + j) * s];
        leaky_run(buf, Y + e + c, m, slope);
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

void torch_nn_functional_leaky_relu__f64(const opgen::Tensor& input, double negative_slope, opgen::Tensor& out) {
  const int64_t total = out.numel();
  if (total == 0) return;
  const T slope = negative_slope;
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
    run_range(X, Y, Lo, 0, total, slope);
    return;
  }
#pragma omp parallel num_threads(threads)
  {
    int t = 0, team = 1;
#ifdef _OPENMP
    t = omp_get_thread_num();
    team = omp_get_num_threads();
#endif
    const int64_t lo = (total * t / team) & ~(kAlign - 1);
    const int64_t hi = t + 1 == team ? total : (total * (t + 1) / team) & ~(kAlign - 1);
    if (lo < hi) run_range(X, Y, Lo, lo, hi, slope);
  }
}

}  // namespace opgen::kernels
