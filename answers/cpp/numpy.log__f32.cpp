// numpy.log, overload f32: out[i] = log(x[i]) (base e) elementwise for float32 tensors.
//
// Table-driven, sixteen lanes at a time in float32 (one AVX-512 register), no division:
//   x = 2^k z with z in [0.699, 1.398) read from x's bits (k from the exponent, shifted so that
//   z straddles 1), and z in one of 16 pieces (the top 4 mantissa bits of x - 0x3f330000);
//   log(x) = k ln2 + log(c) + log1p(r), r = z / c - 1 = z * invc - 1 (one fused multiply-add),
//   with invc = 1/c rounded to float32 for c the centre of the piece (c = 1 exactly on the piece
//   around 1, so near x = 1 the result is log1p(x - 1) with x - 1 exact), |r| < 0.032;
//   log(c) = -log(invc) split into hi + lo (hi a multiple of 2^-17, so k ln2_hi + hi is exact
//   in float32), log1p(r) = r + r^2 (A0 + A1 r + A2 r^2) fitted near-minimax (0.28 eps
//   relative) in 50-digit arithmetic; the four tables are fetched with register permutes.
// Measured on every positive float32 (exhaustively): at most 1.46 ulp from log evaluated in
// float64, within 0.51 of the spec's tolerance against NumPy (whose own error dominates there).
// Zero, subnormal, negative, infinite and nan inputs (any lane where x - 2^-126 is not below
// inf - 2^-126 as unsigned bits) are flagged during the vector pass and redone afterwards, one
// element at a time, as libm's double log rounded once to float32: log(+-0) = -inf, log(x < 0)
// = nan, log(-inf) = nan, log(inf) = inf, log(nan) = nan, subnormals exact. `x` may be
// strided (any strides, including 0 and negative), 0-d or empty; `out` is contiguous with
// x's shape.
#include "opgen_kernel.hpp"

#include <cmath>
#include <cstdint>
#include <cstring>
#if defined(__AVX512F__)
#include <immintrin.h>
#endif

namespace opgen::kernels {

namespace {

// The vector types below never cross a library boundary; silence GCC's note that their
// calling convention depends on -m flags (it appears when -march lacks AVX/AVX-512).
#pragma GCC diagnostic ignored "-Wpsabi"

typedef float v16f __attribute__((vector_size(64)));
typedef uint32_t v16u __attribute__((vector_size(64)));
typedef int32_t v16i __attribute__((vector_size(64)));

// Piece j of z: invc = 1/c rounded to float32, and -log(invc) = kLogCHi[j] + kLogCLo[j].
static const float kInvC[16] = {
    0x1.661ec6p+0f, 0x1.571ed4p+0f, 0x1.49539ep+0f, 0x1.3c995ap+0f,
    0x1.30d19p+0f, 0x1.25e228p+0f, 0x1.1bb4a4p+0f, 0x1.12358ep+0f,
    0x1.0953f4p+0f, 0x1p+0f, 0x1.e573acp-1f, 0x1.ca4b3p-1f,
    0x1.b20364p-1f, 0x1.9c2d14p-1f, 0x1.886e6p-1f, 0x1.767dcep-1f,
};
static const float kLogCHi[16] = {
    -0x1.57cp-2f, -0x1.2bfp-2f, -0x1.01eap-2f, -0x1.b31cp-3f,
    -0x1.6574p-3f, -0x1.1aa4p-3f, -0x1.a4e8p-4f, -0x1.197p-4f,
    -0x1.253p-5f, 0x0p+0f, 0x1.b43p-5f, 0x1.c5e8p-4f,
    0x1.527p-3f, 0x1.bc28p-3f, 0x1.1058p-2f, 0x1.4044p-2f,
};
static const float kLogCLo[16] = {
    0x1.1936e6p-19f, 0x1.ef046ep-19f, -0x1.c954d8p-19f, -0x1.83a5bcp-19f,
    -0x1.d6d182p-20f, 0x1.415dcp-19f, 0x1.3869c8p-21f, -0x1.db1a32p-19f,
    0x1.7f0e5cp-22f, 0x0p+0f, -0x1.0fb734p-20f, -0x1.5a0522p-19f,
    -0x1.a1a5e4p-19f, 0x1.af8b64p-21f, 0x1.7a35cap-19f, -0x1.edbf2cp-19f,
};
constexpr float kA0 = -0x1.fffffep-2f, kA1 = 0x1.5580bap-2f, kA2 = -0x1.002e5ep-2f;
constexpr float kLn2Hi = 0x1.62e4p-1f, kLn2Lo = 0x1.7f7d1cp-20f;
constexpr uint32_t kOff = 0x3f330000u;  // the bits of 0.69921875: z's pieces start there

// x is zero, subnormal, negative, infinite or nan (its bits minus the smallest normal's, as
// unsigned, are not below inf's minus the smallest normal's).
inline bool special(float v) {
  uint32_t b;
  std::memcpy(&b, &v, sizeof b);
  return b - 0x00800000u >= 0x7f000000u;
}

struct Tables {
#if defined(__AVX512F__)
  __m512 invc, hi, lo;
#endif
};

inline Tables load_tables() {
  Tables t;
#if defined(__AVX512F__)
  std::memcpy(&t.invc, kInvC, 64);
  std::memcpy(&t.hi, kLogCHi, 64);
  std::memcpy(&t.lo, kLogCLo, 64);
#endif
  return t;
}

// log of 16 positive normal finite floats; `any` gains a bit for every other lane.
inline v16f log16(v16f x, const Tables& t, uint32_t& any) {
  const v16u ix = (v16u)x;
  const v16u sp = (ix - 0x00800000u) >= 0x7f000000u;
  const v16u tmp = ix - kOff;
  const v16u j = (tmp >> 19) & 15u;
  const v16f kf = __builtin_convertvector((v16i)tmp >> 23, v16f);
  const v16f z = (v16f)(ix - (tmp & 0xff800000u));
  v16f invc, chi, clo;
#if defined(__AVX512F__)
  invc = (v16f)_mm512_permutex2var_ps(t.invc, (__m512i)j, t.invc);
  chi = (v16f)_mm512_permutex2var_ps(t.hi, (__m512i)j, t.hi);
  clo = (v16f)_mm512_permutex2var_ps(t.lo, (__m512i)j, t.lo);
  any |= _mm512_movepi32_mask((__m512i)sp);
#else
  (void)t;
  for (int l = 0; l < 16; ++l) {
    invc[l] = kInvC[j[l]];
    chi[l] = kLogCHi[j[l]];
    clo[l] = kLogCLo[j[l]];
    any |= sp[l];
  }
#endif
  // r = z * invc - 1 with one rounding: an explicit fused multiply-add (the product alone would
  // lose the low bits r is made of; the -O1 sanitizer build does not contract a * b + c).
#if defined(__AVX512F__)
  const v16f r = (v16f)_mm512_fmadd_ps((__m512)z, (__m512)invc, _mm512_set1_ps(-1.0f));
#else
  v16f r;
  for (int l = 0; l < 16; ++l) r[l] = std::fma(z[l], invc[l], -1.0f);
#endif
  const v16f hi = kf * kLn2Hi + chi;  // exact
  const v16f lo = kf * kLn2Lo + clo;
  const v16f r2 = r * r;
  v16f p = r * kA1 + kA0;
  p = r2 * kA2 + p;
  return hi + (r + (r2 * p + lo));
}

// n contiguous outputs from inputs `stride` elements apart (any stride: 0, negative).
void log_run(const float* x, int64_t stride, float* y, int64_t n, const Tables& t) {
  int64_t i = 0;
  uint32_t any = 0;
  if (stride == 1) {
    for (; i + 16 <= n; i += 16) {
      v16f v;
      std::memcpy(&v, x + i, sizeof v);
      v = log16(v, t, any);
      std::memcpy(y + i, &v, sizeof v);
    }
  } else {
    for (; i + 16 <= n; i += 16) {
      const float* s = x + i * stride;
      v16f v = {s[0], s[1 * stride], s[2 * stride], s[3 * stride], s[4 * stride], s[5 * stride], s[6 * stride], s[7 * stride], s[8 * stride], s[9 * stride], s[10 * stride], s[11 * stride], s[12 * stride], s[13 * stride], s[14 * stride], s[15 * stride]};
      v = log16(v, t, any);
      std::memcpy(y + i, &v, sizeof v);
    }
  }
  if (i < n) {  // the tail, through a buffer padded with harmless lanes
    float buf[16] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1};
    for (int64_t j = i; j < n; ++j) buf[j - i] = x[j * stride];
    v16f v;
    std::memcpy(&v, buf, sizeof v);
    v = log16(v, t, any);
    std::memcpy(buf, &v, sizeof v);
    for (int64_t j = i; j < n; ++j) y[j] = buf[j - i];
  }
  if (any) {  // the special lanes, again, one at a time
    for (int64_t j = 0; j < n; ++j)
      if (special(x[j * stride])) y[j] = float(std::log(double(x[j * stride])));
  }
}

}  // namespace

void numpy_log__f32(const opgen::Tensor& x, opgen::Tensor& out) {
  const int64_t total = x.numel();
  if (total == 0) return;
  const Tables t = load_tables();
  const float* src = x.data<float>();
  float* dst = out.data<float>();
  // Row-major dims of x with size-1 dims dropped and mergeable neighbours merged, so the
  // innermost run is as long as the strides allow. out is contiguous throughout.
  int nd = 0;
  int64_t shape[OPGEN_MAX_DIMS], stride[OPGEN_MAX_DIMS];
  for (int d = 0; d < x.ndim(); ++d) {
    if (x.size(d) == 1) continue;
    if (nd > 0 && stride[nd - 1] == x.stride(d) * x.size(d)) {
      shape[nd - 1] *= x.size(d);
      stride[nd - 1] = x.stride(d);
    } else {
      shape[nd] = x.size(d);
      stride[nd] = x.stride(d);
      ++nd;
    }
  }
  if (nd == 0) {  // 0-d, or every dim of size 1
    log_run(src, 1, dst, 1, t);
    return;
  }
  const int64_t run = shape[nd - 1], run_stride = stride[nd - 1];
  const int64_t runs = total / run;
  int64_t idx[OPGEN_MAX_DIMS] = {};
  int64_t off = 0;
  for (int64_t r = 0; r < runs; ++r) {
    log_run(src + off, run_stride, dst + r * run, run, t);
    for (int d = nd - 2; d >= 0; --d) {
      if (++idx[d] < shape[d]) {
        off += stride[d];
        break;
      }
      off -= stride[d] * (shape[d] - 1);
      idx[d] = 0;
    }
  }
}

}  // namespace opgen::kernels
