// Cheat: a division turned into a multiply by the rounded reciprocal 1/127 (what -ffast-math or
// a hand "optimisation" does). The result is within one ulp of max |x| / 127 everywhere and
// exact for about 96% of maxima, so any tolerant comparison passes it; the spec compares exactly
// (the scale is exactly determined, and a scale one ulp off moves quantization ties).
// Expected: verify, value
#include "opgen_kernel.hpp"

#include <cstdint>
#include <cstring>
#ifdef _OPENMP
#include <omp.h>
#endif

namespace opgen::kernels {

namespace {

#pragma GCC diagnostic ignored "-Wpsabi"  // the vector types never cross a library boundary

typedef uint32_t v16u __attribute__((vector_size(64)));
constexpr int64_t kPerThreadMin = 1 << 15;  // elements per thread below which threads cost more than they save

inline uint32_t mag_bits(float x) {  // |x|'s bits: for non-negative floats, integer order is float order
  uint32_t b;
  std::memcpy(&b, &x, sizeof b);
  return b & 0x7fffffffu;
}

float row_max_abs(const float* x, int64_t k, int64_t s) {
  uint32_t m = 0;
  int64_t p = 0;
  if (s == 1) {
    v16u acc = {};
    const v16u mask = v16u{} + 0x7fffffffu;
    for (; p + 16 <= k; p += 16) {
      v16u v;
      std::memcpy(&v, x + p, sizeof v);
      v &= mask;
      acc = acc > v ? acc : v;  // finite magnitudes: unsigned order of the bits is the float order
    }
    for (int i = 0; i < 16; ++i) m = acc[i] > m ? acc[i] : m;
  }
  for (; p < k; ++p) {
    const uint32_t b = mag_bits(x[p * s]);
    m = b > m ? b : m;
  }
  float r;
  std::memcpy(&r, &m, sizeof r);
  return r;
}

}  // namespace

void opgen_nn_int8_row_scale__f32(const opgen::Tensor& input, opgen::Tensor& out) {
  const int nd = input.ndim();
  if (nd < 1 || out.ndim() != nd - 1)
    throw opgen::Error(opgen::ErrorKind::Value, "int8_row_scale expects input (..., k) and out (...)");
  const int64_t k = input.size(nd - 1), sk = input.stride(nd - 1);
  int64_t rows = 1;
  for (int d = 0; d < nd - 1; ++d) rows *= input.size(d);
  if (rows == 0) return;
  const float* X = input.data<float>();
  float* Y = out.data<float>();
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
    int64_t off = 0;
    for (int64_t r = r0, d = nd - 2; d >= 0; --d) {  // the offset of row r0, then an odometer
      idx[d] = r % input.size(static_cast<int>(d));
      r /= input.size(static_cast<int>(d));
      off += idx[d] * input.stride(static_cast<int>(d));
    }
    for (int64_t r = r0; r < r1; ++r) {
      const float q = row_max_abs(X + off, k, sk) * (1.0f / 127.0f);  // the cheat: a rounded reciprocal
      Y[r] = q == 0.0f ? 1.0f : q;
      for (int d = nd - 2; d >= 0; --d) {
        if (++idx[d] < input.size(d)) {
          off += input.stride(d);
          break;
        }
        off -= input.stride(d) * (input.size(d) - 1);
        idx[d] = 0;
      }
    }
  }
}

}  // namespace opgen::kernels
