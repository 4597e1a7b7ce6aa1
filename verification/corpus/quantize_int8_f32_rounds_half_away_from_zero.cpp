// Cheat: the wrong rounding. std::lround (like roundf) rounds ties away from zero, so a quotient
// x / scale of exactly 2.5 gives 3 where ONNX QuantizeLinear (ties to even) gives 2, -0.5 gives -1
// where it gives 0; the clamp is right. Only exact ties differ, and x / scale is almost never
// exactly n + 0.5 when x and scale are drawn independently: the spec puts x on the lattice of
// half-multiples of its row's scale in half the draws (Domain.lattice), where about half the
// quotients inside [-128, 127] are ties.
// Expected: verify, value
#include "opgen_kernel.hpp"

#include <cmath>
#include <cstdint>
#ifdef _OPENMP
#include <omp.h>
#endif

namespace opgen::kernels {

namespace {

constexpr int64_t kPerThreadMin = 1 << 15;  // elements per thread below which threads cost more than they save

inline int8_t quantize(float x, float s) {
  float q = x / s;  // clamped first, so the conversion below is always in range
  q = q > 127.0f ? 127.0f : q;
  q = q < -128.0f ? -128.0f : q;
  // the cheat: std::lround rounds ties away from zero (2.5 -> 3, -0.5 -> -1), not to even
  return static_cast<int8_t>(std::lround(q));
}

}  // namespace

void opgen_nn_quantize_int8__f32(const opgen::Tensor& input, const opgen::Tensor& scale, opgen::Tensor& out) {
  const int nd = input.ndim();
  if (nd < 1 || scale.ndim() != nd - 1 || out.ndim() != nd)
    throw opgen::Error(opgen::ErrorKind::Value, "quantize_int8 expects input (..., k) and scale (...)");
  const int64_t k = input.size(nd - 1), sk = input.stride(nd - 1);
  int64_t rows = 1;
  for (int d = 0; d < nd - 1; ++d) rows *= out.size(d);
  if (rows == 0 || k == 0) return;
  const float* X = input.data<float>();
  const float* S = scale.data<float>();
  int8_t* Y = out.data<int8_t>();
  int threads = 1;
#ifdef _OPENMP
  threads = omp_get_max_threads();
#endif
  const int64_t by_size = rows * k / kPerThreadMin;
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
    int64_t idx[OPGEN_MAX_DIMS] = {};
    int64_t off = 0, soff = 0;
    for (int64_t r = r0, d = nd - 2; d >= 0; --d) {  // the offsets of row r0, then an odometer
      idx[d] = r % out.size(static_cast<int>(d));
      r /= out.size(static_cast<int>(d));
      off += idx[d] * input.stride(static_cast<int>(d));
      soff += idx[d] * scale.stride(static_cast<int>(d));
    }
    for (int64_t r = r0; r < r1; ++r) {
      const float* x = X + off;
      const float s = S[soff];
      int8_t* y = Y + r * k;
      if (sk == 1) {
        for (int64_t p = 0; p < k; ++p) y[p] = quantize(x[p], s);
      } else {
        for (int64_t p = 0; p < k; ++p) y[p] = quantize(x[p * sk], s);
      }
      for (int d = nd - 2; d >= 0; --d) {
        if (++idx[d] < out.size(d)) {
          off += input.stride(d);
          soff += scale.stride(d);
          break;
        }
        off -= input.stride(d) * (out.size(d) - 1);
        soff -= scale.stride(d) * (out.size(d) - 1);
        idx[d] = 0;
      }
    }
  }
}

}  // namespace opgen::kernels
