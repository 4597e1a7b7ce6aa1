// numpy.log, overload f64: out[i] = log(x[i]) (base e) elementwise for float64 tensors.
//
// Table-driven, eight lanes at a time with GCC vector extensions, no division:
//   x = 2^k z with z in [0.699, 1.398) read from x's bits (k from the exponent, shifted so that
//   z straddles 1), and z in one of 16 pieces (the top 4 mantissa bits of x's bits minus
//   those of 0.69921875); log(x) = k ln2 + log(c) + log1p(r), r = z * invc - 1 (one fused
//   multiply-add; invc = 1/c rounded, c the centre of the piece; c = 1 exactly on the piece
//   around 1, where r = x - 1 is exact), |r| < 0.032; log(c) = -log(invc) split into hi + lo
//   (hi a multiple of 2^-32, so k ln2_hi + hi is exact), log1p(r) - r = r^2 P(r) with P of
//   degree 7 fitted near-minimax (0.06 eps relative, 60-digit arithmetic), evaluated by
//   Estrin's scheme; the tables are fetched with register permutes.
// Measured against log in long double on 25 million points (log-uniform over every normal
// magnitude, uniform, near 1): at most 1.21 ulp (next to x = 0.98, the piece whose log(c)
// nearly cancels log1p(r)), within 0.31 of the spec's tolerance against NumPy.
// Zero, subnormal, negative, infinite and nan inputs are flagged during the vector pass and
// redone afterwards one element at a time with libm's log: log(+-0) = -inf, log(x < 0) =
// nan, log(-inf) = nan, log(inf) = inf, log(nan) = nan, subnormals exact. `x` may be strided
// (any strides, including 0 and negative), 0-d or empty; `out` is contiguous with x's shape.
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

typedef double v8d __attribute__((vector_size(64)));
typedef uint64_t v8u __attribute__((vector_size(64)));
typedef int64_t v8i __attribute__((vector_size(64)));

inline v8d splat(double v) { return v8d{} + v; }

// Piece j of z: invc = 1/c, and -log(invc) = kLogCHi[j] + kLogCLo[j] (50-digit arithmetic).
static const double kInvC[16] = {
    0x1.661ec6a5122f9p+0, 0x1.571ed3c506b3ap+0, 0x1.49539e3b2d067p+0,
    0x1.3c995a47babe7p+0, 0x1.30d190130d190p+0, 0x1.25e22708092f1p+0,
    0x1.1bb4a4046ed29p+0, 0x1.12358e75d3033p+0, 0x1.0953f39010954p+0,
    0x1.0000000000000p+0, 0x1.e573ac901e574p-1, 0x1.ca4b3055ee191p-1,
    0x1.b2036406c80d9p-1, 0x1.9c2d14ee4a102p-1, 0x1.886e5f0abb04ap-1,
    0x1.767dce434a9b1p-1,
};
static const double kLogCHi[16] = {
    -0x1.57bf753c00000p-2, -0x1.2bef07cc00000p-2, -0x1.01eae56400000p-2,
    -0x1.b31d857800000p-3, -0x1.6574ebe800000p-3, -0x1.1aa2b7e000000p-3,
    -0x1.a4e7641000000p-4, -0x1.1973bd1000000p-4, -0x1.252f330000000p-5,
    0x0.0p+0, 0x1.b42dd72000000p-5, 0x1.c5e548f000000p-4,
    0x1.526e5e3800000p-3, 0x1.bc28674000000p-3, 0x1.1058bf9c00000p-2,
    0x1.4043086800000p-2,
};
static const double kLogCLo[16] = {
    -0x1.1a3f5b5bdcba8p-35, -0x1.c9354b7494a01p-34, 0x1.9396ec4c1485fp-34,
    0x1.218e2886a7567p-34, -0x1.82672e2cb0f0cp-36, -0x1.1fb94adc88713p-34,
    0x1.390f219b5ca20p-34, -0x1.1955828553e4cp-34, 0x1.cb9eff947f792p-35,
    0x0.0p+0, -0x1.cd1c8d7ae5d67p-34, 0x1.6f1d0c97585fcp-34,
    0x1.0da1bd57200ebp-34, 0x1.6c66a1cfce745p-34, -0x1.1b52bff605f55p-34,
    0x1.a9f8f043049f8p-36,
};
constexpr double kLn2Hi = 0x1.62e42ff000000p-1, kLn2Lo = -0x1.718432a1b0e26p-35;
constexpr uint64_t kOff = 0x3fe6600000000000ULL;  // the bits of 0.69921875: z's pieces start there
constexpr uint64_t kMinNormal = 0x0010000000000000ULL, kInfBits = 0x7ff0000000000000ULL;

// x is zero, subnormal, negative, infinite or nan.
inline bool special(double v) {
  uint64_t b;
  std::memcpy(&b, &v, sizeof b);
  return b - kMinNormal >= kInfBits - kMinNormal;
}

// log of 8 positive normal finite doubles; `any` becomes nonzero for any other lane.
inline v8d log8(v8d x, uint64_t& any) {
  const v8u ix = (v8u)x;
  const v8u sp = (ix - kMinNormal) >= (kInfBits - kMinNormal);
  const v8u tmp = ix - kOff;
  const v8u j = (tmp >> 48) & 15u;
  const v8d kd = __builtin_convertvector((v8i)tmp >> 52, v8d);
  const v8d z = (v8d)(ix - (tmp & 0xfff0000000000000ULL));
  v8d invc, chi, clo;
#if defined(__AVX512F__)
  {
    __m512d a, b;
    std::memcpy(&a, kInvC, 64);
    std::memcpy(&b, kInvC + 8, 64);
    invc = (v8d)_mm512_permutex2var_pd(a, (__m512i)j, b);
    std::memcpy(&a, kLogCHi, 64);
    std::memcpy(&b, kLogCHi + 8, 64);
    chi = (v8d)_mm512_permutex2var_pd(a, (__m512i)j, b);
    std::memcpy(&a, kLogCLo, 64);
    std::memcpy(&b, kLogCLo + 8, 64);
    clo = (v8d)_mm512_permutex2var_pd(a, (__m512i)j, b);
    any |= _mm512_movepi64_mask((__m512i)sp);
  }
#else
  for (int l = 0; l < 8; ++l) {
    invc[l] = kInvC[j[l]];
    chi[l] = kLogCHi[j[l]];
    clo[l] = kLogCLo[j[l]];
    any |= sp[l];
  }
#endif
  // r = z * invc - 1 with one rounding: an explicit fused multiply-add (the product alone would
  // lose the low bits r is made of; the -O1 sanitizer build does not contract a * b + c).
#if defined(__AVX512F__)
  const v8d r = (v8d)_mm512_fmadd_pd((__m512d)z, (__m512d)invc, _mm512_set1_pd(-1.0));
#else
  v8d r;
  for (int l = 0; l < 8; ++l) r[l] = std::fma(z[l], invc[l], -1.0);
#endif
  const v8d hi = kd * kLn2Hi + chi;  // exact
  const v8d lo = kd * kLn2Lo + clo;
  const v8d r2 = r * r;
  const v8d r4 = r2 * r2;
  const v8d p01 = r * 0x1.55555555554e3p-2 + -0x1.fffffffffffbfp-2;
  const v8d p23 = r * 0x1.9999999bb9545p-3 + -0x1.00000000d1776p-2;
  const v8d p45 = r * 0x1.249230168a891p-3 + -0x1.55553e6e0e08fp-3;
  const v8d p67 = r * 0x1.c80546cca030bp-4 + -0x1.0076adf5dc64bp-3;
  const v8d p = (p67 * r2 + p45) * r4 + (p23 * r2 + p01);
  return hi + (r + (r2 * p + lo));
}

// n contiguous outputs from inputs `stride` elements apart (any stride: 0, negative).
void log_run(const double* x, int64_t stride, double* y, int64_t n) {
  int64_t i = 0;
  uint64_t any = 0;
  if (stride == 1) {
    for (; i + 8 <= n; i += 8) {
      v8d v;
      std::memcpy(&v, x + i, sizeof v);
      v = log8(v, any);
      std::memcpy(y + i, &v, sizeof v);
    }
  } else {
    for (; i + 8 <= n; i += 8) {
      const double* s = x + i * stride;
      v8d v = {s[0], s[1 * stride], s[2 * stride], s[3 * stride], s[4 * stride], s[5 * stride], s[6 * stride], s[7 * stride]};
      v = log8(v, any);
      std::memcpy(y + i, &v, sizeof v);
    }
  }
  if (i < n) {  // the tail, through a buffer padded with harmless lanes
    double buf[8] = {1, 1, 1, 1, 1, 1, 1, 1};
    for (int64_t j = i; j < n; ++j) buf[j - i] = x[j * stride];
    v8d v;
    std::memcpy(&v, buf, sizeof v);
    v = log8(v, any);
    std::memcpy(buf, &v, sizeof v);
    for (int64_t j = i; j < n; ++j) y[j] = buf[j - i];
  }
  if (any) {  // the special lanes, again, one at a time
    for (int64_t j = 0; j < n; ++j)
      if (special(x[j * stride])) y[j] = std::log(x[j * stride]);
  }
}

}  // namespace

void numpy_log__f64(const opgen::Tensor& x, opgen::Tensor& out) {
  const int64_t total = x.numel();
  if (total == 0) return;
  const double* src = x.data<double>();
  double* dst = out.data<double>();
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
    log_run(src, 1, dst, 1);
    return;
  }
  const int64_t run = shape[nd - 1], run_stride = stride[nd - 1];
  const int64_t runs = total / run;
  int64_t idx[OPGEN_MAX_DIMS] = {};
  int64_t off = 0;
  for (int64_t r = 0; r < runs; ++r) {
    log_run(src + off, run_stride, dst + r * run, run);
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
