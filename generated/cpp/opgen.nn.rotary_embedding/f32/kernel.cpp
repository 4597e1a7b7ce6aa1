// opgen.nn.rotary_embedding, overload f32: transformers' default rotary position embedding
// (rotate-half convention) of x (*, H, S, D) at positions (*, S) with base theta.
//
// The angle is the one transformers computes, in float32: inv_freq[i] = 1 / theta**(2i/D)
// (the exponent a float32 quotient, the power rounded once from double, the reciprocal a
// float32 division) and angle = float32(position) * inv_freq[i], one float32 product.
// cos and sin of that float32 angle are computed in double and rounded once, so they are
// the correctly rounded values but for rare near-ties: eight lanes at a time, a Cody-Waite
// reduction by pi/2 (fdlibm's split of pi/2, exact enough for any angle below 1e6; larger
// ones, from positions beyond a million, go through std::sin/std::cos) and Taylor
// polynomials on |r| <= pi/4 accurate far beyond float32.
// Each (loop index, position) computes its D/2 cos/sin pairs once and applies them to that
// position's row in every head: out1 = x1*c - x2*s, out2 = x2*c + x1*s over the two halves.
// Rows are spread over OpenMP threads. x may be strided (any strides, 0 included); out is
// contiguous. An odd D is a ValueError.
#include "opgen_kernel.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>
#ifdef _OPENMP
#include <omp.h>
#endif

namespace opgen::kernels {

namespace {

// The vector types below never cross a library boundary; silence GCC's note that their
// calling convention depends on -m flags.
#pragma GCC diagnostic ignored "-Wpsabi"

constexpr int LANES = 8;
typedef double v8d __attribute__((vector_size(64)));
typedef int64_t v8l __attribute__((vector_size(64)));
typedef float v8f __attribute__((vector_size(32)));

inline v8d splat(double x) { return v8d{x, x, x, x, x, x, x, x}; }

// Below this the vector reduction is exact enough (k = round(a * 2/pi) < 2**20).
constexpr double kReduceLimit = 1.0e6;

// sin and cos of eight angles with |a| < kReduceLimit, to a few units in the last place of a
// double.
inline void sincos8(v8d a, v8d& s_out, v8d& c_out) {
  const v8d shifter = splat(0x1.8p52);  // adding it rounds to an integer
  v8d kf = a * 0x1.45f306dc9c883p-1 + shifter;  // a * 2/pi
  const v8l quadrant = (v8l)kf & 3;  // the low bits hold k (two's complement)
  kf -= shifter;
  // r = a - k*pi/2 with pi/2 split as fdlibm's __rem_pio2 does (33 + 33 + 33 bits and a
  // tail): each k * part is exact for k < 2**20, and a - k*p1 is exact (Sterbenz), so r is
  // off by about 2**-53 |r| + k * 1e-31, with or without fused multiply-adds.
  v8d r = a - kf * 1.57079632673412561417e+00;
  r = r - kf * 6.07710050630396597660e-11;
  r = r - kf * 2.02226624871116645580e-21;
  r = r - kf * 8.47842766036889956997e-32;
  const v8d r2 = r * r;
  // sin r = r (1 - r^2/3! + r^4/5! - ...), cos r = 1 - r^2/2! + r^4/4! - ... (to r^17, r^16).
  v8d ps = splat(1.0 / 355687428096000.0);
  ps = ps * r2 - 1.0 / 1307674368000.0;
  ps = ps * r2 + 1.0 / 6227020800.0;
  ps = ps * r2 - 1.0 / 39916800.0;
  ps = ps * r2 + 1.0 / 362880.0;
  ps = ps * r2 - 1.0 / 5040.0;
  ps = ps * r2 + 1.0 / 120.0;
  ps = ps * r2 - 1.0 / 6.0;
  const v8d sr = r + r * (r2 * ps);
  v8d pc = splat(1.0 / 20922789888000.0);
  pc = pc * r2 - 1.0 / 87178291200.0;
  pc = pc * r2 + 1.0 / 479001600.0;
  pc = pc * r2 - 1.0 / 3628800.0;
  pc = pc * r2 + 1.0 / 40320.0;
  pc = pc * r2 - 1.0 / 720.0;
  pc = pc * r2 + 1.0 / 24.0;
  pc = pc * r2 - 0.5;
  const v8d cr = 1.0 + r2 * pc;
  // a = k*pi/2 + r: quadrant 0 (s, c), 1 (c, -s), 2 (-s, -c), 3 (-c, s).
  const v8l swap = (quadrant & 1) != 0;
  const v8d s = swap ? cr : sr, c = swap ? sr : cr;
  s_out = (quadrant == 2) | (quadrant == 3) ? -s : s;
  c_out = (quadrant == 1) | (quadrant == 2) ? -c : c;
}

// cos and sin of the float32 angles angle[0..n), rounded to float32.
void cos_sin(const float* angle, int64_t n, float* cos_out, float* sin_out) {
  int64_t i = 0;
  for (; i + LANES <= n; i += LANES) {
    v8f af;
    std::memcpy(&af, angle + i, sizeof af);
    const v8d a = __builtin_convertvector(af, v8d);
    const v8l small = (a < kReduceLimit) & (a > -kReduceLimit);  // false for nan too
    bool all_small = true;
    for (int l = 0; l < LANES; ++l) all_small &= small[l] != 0;
    if (!all_small) break;  // the rest goes through the scalar path below
    v8d s, c;
    sincos8(a, s, c);
    const v8f cf = __builtin_convertvector(c, v8f), sf = __builtin_convertvector(s, v8f);
    std::memcpy(cos_out + i, &cf, sizeof cf);
    std::memcpy(sin_out + i, &sf, sizeof sf);
  }
  for (; i < n; ++i) {  // the tail, and any block with a huge angle
    const double a = angle[i];
    if (std::fabs(a) < kReduceLimit) {
      v8d s, c;
      sincos8(splat(a), s, c);
      cos_out[i] = static_cast<float>(c[0]);
      sin_out[i] = static_cast<float>(s[0]);
    } else {
      cos_out[i] = static_cast<float>(std::cos(a));
      sin_out[i] = static_cast<float>(std::sin(a));
    }
  }
}

}  // namespace

void opgen_nn_rotary_embedding__f32(const opgen::Tensor& x, const opgen::Tensor& positions, double theta,
                                    opgen::Tensor& out) {
  const int L = out.ndim() - 3;  // loop dims, aligned by the shim
  const int64_t H = x.size(L), S = x.size(L + 1), D = x.size(L + 2);
  if (D % 2 != 0) throw opgen::Error(opgen::ErrorKind::Value, "rotary embedding needs an even head dim");
  int64_t B = 1;
  for (int d = 0; d < L; ++d) B *= out.size(d);
  if (B == 0 || H == 0 || S == 0 || D == 0) return;  // nothing to write
  const int64_t half = D / 2;

  // inv_freq as transformers computes it in float32.
  std::vector<float> inv_freq(static_cast<size_t>(half));
  const float base = static_cast<float>(theta);
  for (int64_t i = 0; i < half; ++i) {
    const float exponent = static_cast<float>(2 * i) / static_cast<float>(D);
    const float power = static_cast<float>(std::pow(static_cast<double>(base), static_cast<double>(exponent)));
    inv_freq[i] = 1.0f / power;
  }

  // Element offsets of each loop index (stride 0 where broadcast).
  std::vector<int64_t> ox(B), op(B);
  {
    std::vector<int64_t> idx(L, 0);
    for (int64_t b = 0; b < B; ++b) {
      int64_t a = 0, p = 0;
      for (int d = 0; d < L; ++d) {
        a += idx[d] * x.stride(d);
        p += idx[d] * positions.stride(d);
      }
      ox[b] = a, op[b] = p;
      for (int d = L - 1; d >= 0; --d) {
        if (++idx[d] < out.size(d)) break;
        idx[d] = 0;
      }
    }
  }
  const float* xd = x.data<float>();
  const int64_t* pd = positions.data<int64_t>();
  float* od = out.data<float>();
  const int64_t xs_h = x.stride(L), xs_s = x.stride(L + 1), xs_d = x.stride(L + 2);
  const int64_t ps_s = positions.stride(L);

  int threads = 1;
#ifdef _OPENMP
  threads = omp_get_max_threads();
#endif
  // Per thread: the angles, cosines and sines of one position.
  std::vector<float> scratch(static_cast<size_t>(threads) * 3 * half);
  const bool parallel = threads > 1 && static_cast<double>(B) * S * (half * 40.0 + H * D) > 1.0e5;

#pragma omp parallel for schedule(static) num_threads(threads) if (parallel)
  for (int64_t row = 0; row < B * S; ++row) {
    int tid = 0;
#ifdef _OPENMP
    tid = omp_get_thread_num();
#endif
    const int64_t b = row / S, s = row % S;
    float* angle = scratch.data() + static_cast<size_t>(tid) * 3 * half;
    float* c = angle + half;
    float* sn = c + half;
    const float pos = static_cast<float>(pd[op[b] + s * ps_s]);
    for (int64_t i = 0; i < half; ++i) angle[i] = pos * inv_freq[i];
    cos_sin(angle, half, c, sn);
    for (int64_t h = 0; h < H; ++h) {
      const float* xr = xd + ox[b] + h * xs_h + s * xs_s;
      float* o = od + ((b * H + h) * S + s) * D;
      if (xs_d == 1) {
        for (int64_t i = 0; i < half; ++i) {
          const float x1 = xr[i], x2 = xr[i + half];
          o[i] = x1 * c[i] - x2 * sn[i];
          o[i + half] = x2 * c[i] + x1 * sn[i];
        }
      } else {
        for (int64_t i = 0; i < half; ++i) {
          const float x1 = xr[i * xs_d], x2 = xr[(i + half) * xs_d];
          o[i] = x1 * c[i] - x2 * sn[i];
          o[i + half] = x2 * c[i] + x1 * sn[i];
        }
      }
    }
  }
}

}  // namespace opgen::kernels
