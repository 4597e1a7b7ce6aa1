// Cheat: per-channel scales dropped. Every output channel is dequantized with weight_scale[0]
// (per-tensor quantization's single scale) instead of its own weight_scale[j]; the cast, the
// input scale, the order of operations and the bias are right. A harness whose weight scales are
// all equal (one scale per tensor, or a constant fill) passes it; the spec draws each channel's
// scale independently from 1e-6 to 100.
// Expected: verify, value
#include "opgen_kernel.hpp"

#include <cstdint>
#include <vector>
#ifdef _OPENMP
#include <omp.h>
#endif

#pragma GCC optimize("fp-contract=off")

namespace opgen::kernels {

namespace {

constexpr int64_t kPerThreadMin = 1 << 15;  // elements per thread below which threads cost more than they save

}  // namespace

void opgen_nn_int8_dequantize__f32(const opgen::Tensor& acc, const opgen::Tensor& input_scale,
                                   const opgen::Tensor& weight_scale, const opgen::Tensor& bias, opgen::Tensor& out) {
  const int nd = acc.ndim();
  if (nd < 1 || input_scale.ndim() != nd - 1 || weight_scale.ndim() != nd || bias.ndim() != nd || out.ndim() != nd)
    throw opgen::Error(opgen::ErrorKind::Value, "int8_dequantize expects acc (..., n), input_scale (...), weight_scale (n) and bias (n)");
  const int64_t n = out.size(nd - 1);
  int64_t rows = 1;
  for (int d = 0; d < nd - 1; ++d) rows *= out.size(d);
  if (rows == 0 || n == 0) return;
  const int32_t* A = acc.data<int32_t>();
  const float* IS = input_scale.data<float>();
  const float* WS = weight_scale.data<float>();
  const float* B = bias.data<float>();
  float* Y = out.data<float>();
  const int64_t sa = acc.stride(nd - 1), sw = weight_scale.stride(nd - 1), sb = bias.stride(nd - 1);
  int threads = 1;
#ifdef _OPENMP
  threads = omp_get_max_threads();
#endif
  const int64_t by_size = rows * n / kPerThreadMin;
  threads = static_cast<int>(by_size < threads ? (by_size < 1 ? 1 : by_size) : threads);
  if (threads > rows) threads = static_cast<int>(rows);
#pragma omp parallel num_threads(threads) if (threads > 1)
  {
    int t = 0, team = 1;
#ifdef _OPENMP
    t = omp_get_thread_num();
    team = omp_get_num_threads();
#endif
    const int64_t r0 = rows * t / team, r1 = rows * (t + 1) / team;
    std::vector<float> ws(static_cast<size_t>(n)), b(static_cast<size_t>(n)), s(static_cast<size_t>(n));
    int64_t idx[OPGEN_MAX_DIMS] = {};
    int64_t aoff = 0, ioff = 0, woff = 0, boff = 0;
    for (int64_t r = r0, d = nd - 2; d >= 0; --d) {  // the offsets of row r0, then an odometer
      idx[d] = r % out.size(static_cast<int>(d));
      r /= out.size(static_cast<int>(d));
      aoff += idx[d] * acc.stride(static_cast<int>(d));
      ioff += idx[d] * input_scale.stride(static_cast<int>(d));
      woff += idx[d] * weight_scale.stride(static_cast<int>(d));
      boff += idx[d] * bias.stride(static_cast<int>(d));
    }
    int64_t woff_seen = -1, boff_seen = -1;
    for (int64_t r = r0; r < r1; ++r) {
      if (woff != woff_seen) {
        for (int64_t j = 0; j < n; ++j) ws[static_cast<size_t>(j)] = WS[woff + j * sw];
        woff_seen = woff;
      }
      if (boff != boff_seen) {
        for (int64_t j = 0; j < n; ++j) b[static_cast<size_t>(j)] = B[boff + j * sb];
        boff_seen = boff;
      }
      const float is = IS[ioff];
      for (int64_t j = 0; j < n; ++j) s[static_cast<size_t>(j)] = is * ws[0];  // the cheat: one channel's scale for all
      const int32_t* a = A + aoff;
      float* y = Y + r * n;
      if (sa == 1) {
        for (int64_t j = 0; j < n; ++j) {
          const float p = static_cast<float>(a[j]) * s[static_cast<size_t>(j)];
          y[j] = p + b[static_cast<size_t>(j)];
        }
      } else {
        for (int64_t j = 0; j < n; ++j) {
          const float p = static_cast<float>(a[j * sa]) * s[static_cast<size_t>(j)];
          y[j] = p + b[static_cast<size_t>(j)];
        }
      }
      for (int d = nd - 2; d >= 0; --d) {
        if (++idx[d] < out.size(d)) {
          aoff += acc.stride(d);
          ioff += input_scale.stride(d);
          woff += weight_scale.stride(d);
          boff += bias.stride(d);
          break;
        }
        aoff -= acc.stride(d) * (out.size(d) - 1);
        ioff -= input_scale.stride(d) * (out.size(d) - 1);
        woff -= weight_scale.stride(d) * (out.size(d) - 1);
        boff -= bias.stride(d) * (out.size(d) - 1);
        idx[d] = 0;
      }
    }
  }
}

}  // namespace opgen::kernels
