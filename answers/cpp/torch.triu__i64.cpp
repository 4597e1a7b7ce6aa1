// torch.triu, overload i64: the upper triangle of each matrix in input's last two dims, the rest 0.
//
// input is (*, m, n); out[..., i, j] = input[..., i, j] where j - i >= diagonal, else 0 (all-zero
// bits: +0.0 for floats, whatever input held). Row i keeps the columns j in [max(0, i + diagonal), n), computed with the
// diagonal clamped to [-m, n] first so that i + diagonal cannot overflow (any int64 diagonal is legal).
// Each output row is one copy of the kept run (memcpy where input's rows are contiguous, a strided
// loop otherwise) and one memset of the rest; rows are split across the OpenMP threads when the
// tensor is large. Kept values are copied bit for bit.
#include "opgen_kernel.hpp"

#include <cstdint>
#include <cstring>
#ifdef _OPENMP
#include <omp.h>
#endif

namespace opgen::kernels {

namespace {

using T = int64_t;
constexpr int64_t kPerThreadBytes = int64_t(1) << 22;  // bandwidth-bound: only large copies are split

}  // namespace

void torch_triu__i64(const opgen::Tensor& input, int64_t diagonal, opgen::Tensor& out) {
  const int nd = input.ndim();
  if (nd < 2) throw opgen::Error(opgen::ErrorKind::Value, "triu: input tensor must have at least 2 dimensions");
  const int64_t m = input.size(-2), n = input.size(-1);
  const int64_t total = input.numel();
  if (total == 0) return;
  const int64_t rows = total / n;
  const int64_t k = diagonal < -m ? -m : (diagonal > n ? n : diagonal);
  const int64_t rs = input.stride(-2), cs = input.stride(-1);
  const T* src = input.data<T>();
  T* dst = out.data<T>();
  int threads = 1;
#ifdef _OPENMP
  threads = omp_get_max_threads();
#endif
  const int64_t by_size = total * int64_t(sizeof(T)) / kPerThreadBytes;
  threads = static_cast<int>(by_size < threads ? (by_size < 1 ? 1 : by_size) : threads);
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1)
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t i = r % m;
    // the source row: leading dims unravelled from r / m
    int64_t off = i * rs, rest = r / m;
    for (int d = nd - 3; d >= 0; --d) {
      off += (rest % input.size(d)) * input.stride(d);
      rest /= input.size(d);
    }
    const T* x = src + off;
    T* y = dst + r * n;
    const int64_t lo = i + k < 0 ? 0 : (i + k > n ? n : i + k), hi = n;
    if (lo > 0) std::memset(y, 0, size_t(lo) * sizeof(T));
    if (hi < n) std::memset(y + hi, 0, size_t(n - hi) * sizeof(T));
    if (lo < hi) {
      if (cs == 1) {
        std::memcpy(y + lo, x + lo, size_t(hi - lo) * sizeof(T));
      } else {
        for (int64_t j = lo; j < hi; ++j) y[j] = x[j * cs];
      }
    }
  }
}

}  // namespace opgen::kernels
