// numpy.exp, overload f32: out[i] = exp(x[i]) elementwise for float32 tensors.
//
// Each element is evaluated in double precision and rounded once to float32, so the
// result is within ~0.501 ulp of the true value (essentially correctly rounded):
//   with AVX-512: x = (k/16)*ln2 + r, |r| <= ln2/32, 2**(k/16) from a 16-entry table
//                 held in registers, exp(r) by its degree-4 Taylor polynomial;
//   otherwise:    x = k*ln2 + r, |r| <= ln2/2, exp(r) by its degree-8 Taylor polynomial,
//                 2**k from the exponent bits.
// Eight lanes at a time with GCC vector extensions, no branches. Overflow gives inf
// (x > ~88.72), underflow gives float32 subnormals and then 0, exp(-inf) = 0,
// exp(inf) = inf, exp(nan) = nan, exp(-0.0) = 1. `x` may be strided (any strides,
// including 0 and negative), 0-d or empty; `out` is contiguous with x's shape.
#include "opgen_kernel.hpp"

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

typedef float v8f __attribute__((vector_size(32)));
typedef double v8d __attribute__((vector_size(64)));
typedef uint64_t v8u __attribute__((vector_size(64)));

inline v8d splat(double v) { return v8d{v, v, v, v, v, v, v, v}; }

#if defined(__AVX512F__)
// H[j] = bits(round(2**(j/16))) - (j << 48).
static const uint64_t kExp2H[16] = {
    0x3ff0000000000000ULL, 0x3fefb5586cf9890fULL, 0x3fef72b83c7d517bULL, 0x3fef387a6e756238ULL,
    0x3fef06fe0a31b715ULL, 0x3feedea64c123422ULL, 0x3feebfdad5362a27ULL, 0x3feeab07dd485429ULL,
    0x3feea09e667f3bcdULL, 0x3feea11473eb0187ULL, 0x3feeace5422aa0dbULL, 0x3feec49182a3f090ULL,
    0x3feee89f995ad3adULL, 0x3fef199bdd85529cULL, 0x3fef5818dcfba487ULL, 0x3fefa4afa2a490daULL,
};
#endif

inline v8f exp8(v8f xf) {
  const v8d kShift = splat(0x1.8p52);              // rounds to an integer in the low mantissa bits
  const v8d lo = splat(-110.0), hi = splat(89.0);
  v8d x = __builtin_convertvector(xf, v8d);
  // Clamp into a range where the scale is a normal double; the clamped ends still round
  // to 0 (exp(-110) < 2**-150) and to inf (exp(89) > FLT_MAX) in float32. A nan
  // compares false, stays nan, and makes r, p and the result nan.
  x = x < lo ? lo : x;
  x = x > hi ? hi : x;
#if defined(__AVX512F__)
  // x = (k/16)*ln2 + r, |r| <= ln2/32; 2**(k/16) from a 16-entry table (a register
  // permute); exp(r) by its degree-4 Taylor polynomial (truncation < 5e-11).
  v8d kd = x * splat(0x1.71547652b82fep+4) + kShift;  // 16/ln2
  const v8u kbits = (v8u)kd;
  kd -= kShift;
  const v8d r = x - kd * splat(0x1.62e42fefa39efp-5);  // ln2/16
  __m512i h0, h1;
  std::memcpy(&h0, kExp2H, 64);
  std::memcpy(&h1, kExp2H + 8, 64);
  const v8u hbits = (v8u)_mm512_permutex2var_epi64(h0, (__m512i)(kbits & 15u), h1);
  const v8d scale = (v8d)(hbits + (kbits << 48));
  v8d p = splat(1.0 / 24.0);
  p = p * r + 1.0 / 6.0;
  p = p * r + 0.5;
  p = p * r + 1.0;
  p = p * r + 1.0;
#else
  // x = k*ln2 + r, |r| <= ln2/2; exp(r) by its degree-8 Taylor polynomial (truncation
  // < 3e-10); 2**k from the exponent bits.
  const v8d kLog2e = splat(0x1.71547652b82fep+0);    // 1/ln2
  const v8d kLn2Hi = splat(0x1.62e42fee00000p-1);    // ln2 split so that k*kLn2Hi is exact
  const v8d kLn2Lo = splat(0x1.a39ef35793c76p-33);
  v8d kd = x * kLog2e + kShift;
  const v8u kbits = (v8u)kd;
  kd -= kShift;
  const v8d r = (x - kd * kLn2Hi) - kd * kLn2Lo;
  v8d p = splat(1.0 / 40320.0);
  p = p * r + 1.0 / 5040.0;
  p = p * r + 1.0 / 720.0;
  p = p * r + 1.0 / 120.0;
  p = p * r + 1.0 / 24.0;
  p = p * r + 1.0 / 6.0;
  p = p * r + 0.5;
  p = p * r + 1.0;
  p = p * r + 1.0;
  // k is in [-159, 129], so k + 1023 fits the 11-bit exponent field. The low 12 bits of
  // kbits hold k in two's complement; the shift drops everything above them.
  const v8d scale = (v8d)((kbits + 1023u) << 52);
#endif
  return __builtin_convertvector(p * scale, v8f);
}

// n contiguous outputs from inputs `stride` elements apart.
void exp_run(const float* x, int64_t stride, float* y, int64_t n) {
  int64_t i = 0;
  if (stride == 1) {
    for (; i + 8 <= n; i += 8) {
      v8f v;
      std::memcpy(&v, x + i, sizeof v);
      v = exp8(v);
      std::memcpy(y + i, &v, sizeof v);
    }
  } else {
    for (; i + 8 <= n; i += 8) {
      const float* s = x + i * stride;
      v8f v = {s[0], s[stride], s[2 * stride], s[3 * stride], s[4 * stride], s[5 * stride], s[6 * stride], s[7 * stride]};
      v = exp8(v);
      std::memcpy(y + i, &v, sizeof v);
    }
  }
  if (i < n) {
    float buf[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    for (int64_t j = i; j < n; ++j) buf[j - i] = x[j * stride];
    v8f v;
    std::memcpy(&v, buf, sizeof v);
    v = exp8(v);
    std::memcpy(buf, &v, sizeof v);
    for (int64_t j = i; j < n; ++j) y[j] = buf[j - i];
  }
}

}  // namespace

void numpy_exp__f32(const opgen::Tensor& x, opgen::Tensor& out) {
  const int64_t total = x.numel();
  if (total == 0) return;
  const float* src = x.data<float>();
  float* dst = out.data<float>();
  // Row-major dims of x with size-1 dims dropped and mergeable neighbours merged, so
  // the innermost run is as long as the strides allow. out is contiguous throughout.
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
    exp_run(src, 1, dst, 1);
    return;
  }
  const int64_t run = shape[nd - 1], run_stride = stride[nd - 1];
  const int64_t runs = total / run;
  int64_t idx[OPGEN_MAX_DIMS] = {};
  int64_t off = 0;
  for (int64_t r = 0; r < runs; ++r) {
    exp_run(src + off, run_stride, dst + r * run, run);
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
