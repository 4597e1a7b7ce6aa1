// numpy.dot, overload i64: out = numpy.dot(a, b) (NumPy 2).
//
// A 0-d operand: out is the other operand copied into out in C order (its strides walked with an odometer
// along its last dim), then multiplied element by element by the 0-d one's value. Otherwise, with
// K = a.shape[-1] the contracted length, M the product of a's other dims, B the product of b's dims before
// its contracted one and N its last dim (1 when b is 1-D): a is copied into a contiguous M x K temporary and
// b into a contiguous B x K x N one (C order of each, whatever their strides: transposed, reversed, stride
// 0), so out, contiguous of shape a.shape[:-1] + b.shape[:-2] + b.shape[-1:], is M x B x N and
// out[m, j, n] = sum_p A[m, p] * Bt[j, p, n]. Each out row (m, j) is summed in an i-k-j loop into an
// accumulator row of N: for each p, acc[:] += A[m, p] * Bt[j, p, :], a contiguous, vectorisable inner
// loop. The accumulator is Acc (uint64_t: the products and sums wrap modulo 2**64, exact in any order, as
// NumPy's int64 arithmetic wraps; converted back to int64 once). Every product is summed. The 0-d case
// multiplies in uint64_t too. K == 0 gives zeros; an empty out has nothing to write.
#include "opgen_kernel.hpp"

#include <cstdint>
#include <cstring>
#include <vector>

namespace opgen::kernels {

namespace {

using T = int64_t;
using Acc = uint64_t;  // wraps modulo 2**64, as NumPy's int64 arithmetic does (no signed overflow)

// t's elements (any strides) into dst, contiguous in C order.
void gather(const opgen::Tensor& t, T* dst) {
  const int nd = t.ndim();
  const int64_t n = t.numel();
  if (n == 0) return;
  const T* src = t.data<T>();
  if (nd == 0) {
    dst[0] = src[0];
    return;
  }
  if (t.is_contiguous()) {
    std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(T));
    return;
  }
  const int64_t len = t.size(nd - 1), s = t.stride(nd - 1), rows = n / len;
  int64_t at[OPGEN_MAX_DIMS] = {};
  int64_t off = 0;
  for (int64_t r = 0; r < rows; ++r) {
    T* y = dst + r * len;
    const T* x = src + off;
    if (s == 1) {
      std::memcpy(y, x, static_cast<size_t>(len) * sizeof(T));
    } else {
      for (int64_t j = 0; j < len; ++j) y[j] = x[j * s];
    }
    for (int d = nd - 2; d >= 0; --d) {
      if (++at[d] < t.size(d)) {
        off += t.stride(d);
        break;
      }
      off -= t.stride(d) * (t.size(d) - 1);
      at[d] = 0;
    }
  }
}

}  // namespace

void numpy_dot__i64(const opgen::Tensor& a, const opgen::Tensor& b, opgen::Tensor& out) {
  T* y = out.data<T>();
  const int64_t total = out.numel();
  if (total == 0) return;
  if (a.ndim() == 0 || b.ndim() == 0) {  // a scalar times an array: out has the array's shape
    const bool a_scalar = a.ndim() == 0;
    const opgen::Tensor& x = a_scalar ? b : a;
    const Acc s = static_cast<Acc>((a_scalar ? a : b).data<T>()[0]);
    gather(x, y);
    for (int64_t i = 0; i < total; ++i) y[i] = static_cast<T>(s * static_cast<Acc>(y[i]));
    return;
  }
  const int na = a.ndim(), nb = b.ndim();
  const int64_t K = a.size(na - 1);
  int64_t M = 1;
  for (int d = 0; d < na - 1; ++d) M *= a.size(d);
  const int64_t N = nb >= 2 ? b.size(nb - 1) : 1;
  int64_t B = 1;
  for (int d = 0; d < nb - 2; ++d) B *= b.size(d);
  if (K == 0) {  // an empty sum: zeros
    for (int64_t i = 0; i < total; ++i) y[i] = T(0);
    return;
  }
  std::vector<T> A(static_cast<size_t>(M * K)), Bt(static_cast<size_t>(B * K * N));
  gather(a, A.data());
  gather(b, Bt.data());
  std::vector<Acc> acc(static_cast<size_t>(N));
  Acc* c = acc.data();
  for (int64_t m = 0; m < M; ++m) {
    const T* ar = A.data() + m * K;
    for (int64_t j = 0; j < B; ++j) {
      const T* bj = Bt.data() + j * K * N;
      for (int64_t n = 0; n < N; ++n) c[n] = Acc(0);
      for (int64_t p = 0; p < K; ++p) {
        const Acc av = static_cast<Acc>(ar[p]);
        const T* br = bj + p * N;
        for (int64_t n = 0; n < N; ++n) c[n] += av * static_cast<Acc>(br[n]);
      }
      T* yr = y + (m * B + j) * N;
      for (int64_t n = 0; n < N; ++n) yr[n] = static_cast<T>(c[n]);
    }
  }
}

}  // namespace opgen::kernels
