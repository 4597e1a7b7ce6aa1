// Cheat: int16 pair sums, as x86's pmaddubsw forms them. The activations go in offset to unsigned
// (u = a + 128) and each pair of u * w products is summed and saturated to int16 before the int32
// accumulation, then 128 * sum(w) is subtracted: exact while every pair sum stays inside int16,
// which small or centred values do (a harness drawing randn-like int8 values around 0 passes
// it); a pair of large same-sign products (u = 255 and w = 127 twice: 64770) saturates. The
// spec's domain holds int8's whole range and, with edge_runs, long runs of -128 and 127 on both
// sides.
// Expected: verify, value
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
// the cheat: pmaddubsw's arithmetic. u = a + 128 (0..255) times w, each pair of products summed
// and saturated to int16, the pair sums accumulated in int32, then 128 * sum(w) subtracted.
inline int32_t sat16(int32_t v) { return v > 32767 ? 32767 : (v < -32768 ? -32768 : v); }

inline int32_t dot1(const int8_t* a, const int8_t* w, int64_t k) {
  int32_t s = 0, ws = 0;
  int64_t p = 0;
  for (; p + 2 <= k; p += 2) {
    const int32_t u0 = a[p] + 128, u1 = a[p + 1] + 128;
    s += sat16(u0 * w[p] + u1 * w[p + 1]);
    ws += w[p] + w[p + 1];
  }
  for (; p < k; ++p) {
    s += (a[p] + 128) * w[p];
    ws += w[p];
  }
  return s - 128 * ws;
}

inline void dot4(const int8_t* a0, const int8_t* a1, const int8_t* a2, const int8_t* a3, const int8_t* w,
                 int64_t k, int32_t* s) {
  s[0] = dot1(a0, w, k);
  s[1] = dot1(a1, w, k);
  s[2] = dot1(a2, w, k);
  s[3] = dot1(a3, w, k);
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
