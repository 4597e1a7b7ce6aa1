// opgen.nn.int8_matmul, overload i8: out[..., j] = sum_p int32(input[..., p]) * int32(weight[j, p])
// (int8 x int8 -> int32, the linear layout: weight is (n, k), rows the output channels).
//
// Portable C++: every product is formed and summed in int32 (|product| <= 16384, and the
// contract's k <= 131071 keeps every sum inside int32), so the result is exact in any order.
// The weight is packed once into a contiguous (n, k) int8 matrix whatever its strides (the
// shim presents it with input's leading dims in front at stride 0; a weight that really varies
// along a leading dim is not a linear layer and throws ValueError), and each block of four
// input rows into a contiguous (4, k) buffer; every weight row is then dotted with the four
// rows at once, so each weight byte loaded serves four sums. The inner loop over k is plain
// int32 multiply-adds that the compiler vectorises (sign-extending the bytes first). OpenMP
// threads split the row blocks, or the channels when there are few rows.
#include "opgen_kernel.hpp"

#include <cstdint>
#include <cstring>
#include <vector>
#ifdef _OPENMP
#include <omp.h>
#endif

namespace opgen::kernels {

namespace {

constexpr int MR = 4;                    // input rows per block
constexpr double kThreadWork = 1.0e6;    // multiply-adds below which one thread is faster

// Four dot products of the rows a0..a3 (contiguous, k bytes each) with the weight row w.
inline void dot4(const int8_t* a0, const int8_t* a1, const int8_t* a2, const int8_t* a3, const int8_t* w,
                 int64_t k, int32_t* s) {
  int32_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  for (int64_t p = 0; p < k; ++p) {
    const int32_t x = w[p];
    s0 += static_cast<int32_t>(a0[p]) * x;
    s1 += static_cast<int32_t>(a1[p]) * x;
    s2 += static_cast<int32_t>(a2[p]) * x;
    s3 += static_cast<int32_t>(a3[p]) * x;
  }
  s[0] = s0;
  s[1] = s1;
  s[2] = s2;
  s[3] = s3;
}

inline int32_t dot1(const int8_t* a, const int8_t* w, int64_t k) {
  int32_t s = 0;
  for (int64_t p = 0; p < k; ++p) s += static_cast<int32_t>(a[p]) * static_cast<int32_t>(w[p]);
  return s;
}

}  // namespace

void opgen_nn_int8_matmul__i8(const opgen::Tensor& input, const opgen::Tensor& weight, opgen::Tensor& out) {
  const int nd = input.ndim();  // loop dims + (k)
  if (nd < 1 || weight.ndim() != nd + 1 || out.ndim() != nd)
    throw opgen::Error(opgen::ErrorKind::Value, "int8_matmul expects input (..., k) and weight (n, k)");
  int64_t m = 1;
  for (int d = 0; d < nd - 1; ++d) {
    if (out.size(d) > 1 && weight.stride(d) != 0)
      throw opgen::Error(opgen::ErrorKind::Value, "int8_matmul expects a 2-d weight (out_features, in_features)");
    m *= out.size(d);
  }
  const int64_t n = out.size(nd - 1), k = input.size(nd - 1);
  if (m == 0 || n == 0) return;
  int32_t* C = out.data<int32_t>();
  if (k == 0) {
    std::memset(C, 0, static_cast<size_t>(m * n) * sizeof(int32_t));
    return;
  }
  // The weight, contiguous (n, k).
  std::vector<int8_t> W(static_cast<size_t>(n * k));
  {
    const int8_t* w = weight.data<int8_t>();
    const int64_t sn = weight.stride(nd - 1), sk = weight.stride(nd);
    for (int64_t j = 0; j < n; ++j)
      for (int64_t p = 0; p < k; ++p) W[static_cast<size_t>(j * k + p)] = w[j * sn + p * sk];
  }
  // Offsets of the rows of input (its leading dims in row-major order).
  std::vector<int64_t> roff(static_cast<size_t>(m));
  {
    int64_t idx[OPGEN_MAX_DIMS] = {};
    int64_t off = 0;
    for (int64_t i = 0; i < m; ++i) {
      roff[static_cast<size_t>(i)] = off;
      for (int d = nd - 2; d >= 0; --d) {
        if (++idx[d] < out.size(d)) {
          off += input.stride(d);
          break;
        }
        off -= input.stride(d) * (out.size(d) - 1);
        idx[d] = 0;
      }
    }
  }
  const int8_t* X = input.data<int8_t>();
  const int64_t sx = input.stride(nd - 1);
  const int64_t blocks = (m + MR - 1) / MR;
  int threads = 1;
#ifdef _OPENMP
  threads = omp_get_max_threads();
#endif
  if (static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k) < kThreadWork) threads = 1;
  const bool by_rows = blocks >= 2 * threads;
#pragma omp parallel num_threads(threads) if (threads > 1)
  {
    int t = 0, team = 1;
#ifdef _OPENMP
    t = omp_get_thread_num();
    team = omp_get_num_threads();
#endif
    int64_t b0 = 0, b1 = blocks, j0 = 0, j1 = n;
    if (by_rows) {
      b0 = blocks * t / team;
      b1 = blocks * (t + 1) / team;
    } else {
      j0 = n * t / team;
      j1 = n * (t + 1) / team;
    }
    std::vector<int8_t> A(static_cast<size_t>(MR * k));
    for (int64_t b = b0; b < b1; ++b) {
      const int64_t i0 = b * MR, mr = m - i0 < MR ? m - i0 : MR;
      for (int64_t r = 0; r < mr; ++r) {
        const int8_t* src = X + roff[static_cast<size_t>(i0 + r)];
        int8_t* dst = A.data() + r * k;
        if (sx == 1) {
          std::memcpy(dst, src, static_cast<size_t>(k));
        } else {
          for (int64_t p = 0; p < k; ++p) dst[p] = src[p * sx];
        }
      }
      if (mr == MR) {
        for (int64_t j = j0; j < j1; ++j) {
          int32_t s[MR];
          dot4(A.data(), A.data() + k, A.data() + 2 * k, A.data() + 3 * k, W.data() + j * k, k, s);
          for (int r = 0; r < MR; ++r) C[(i0 + r) * n + j] = s[r];
        }
      } else {
        for (int64_t r = 0; r < mr; ++r)
          for (int64_t j = j0; j < j1; ++j) C[(i0 + r) * n + j] = dot1(A.data() + r * k, W.data() + j * k, k);
      }
    }
  }
}

}  // namespace opgen::kernels
