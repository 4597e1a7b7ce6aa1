// numpy.tanh, overload f64: out[i] = tanh(x[i]) elementwise for float64 tensors.
//
// Eight lanes at a time with GCC vector extensions, no branches. tanh is odd: the kernel works
// on a = |x| and puts x's sign bit back at the end; a is clamped to 19.5 (tanh(a) rounds to 1
// in float64 from 19.06 on; the clamp maps inf to 1 and keeps a nan a nan). Both paths are
// computed and one is selected per lane:
//   a < 0.625: tanh(a) = a + a s P(s), s = a^2, P of degree 10 fitted near-minimax (in 60-digit
//              arithmetic) to tanh's relative error: 0.05 eps; tiny a (subnormals included)
//              gives a itself;
//   a >= 0.625: tanh(a) = 1 - 2 / (1 + e^(2a)), with e^(2a) table-driven (the numpy.exp f64
//              kernel's method: 2^(k/16) from a 16-entry table held in registers, e^r - 1 by
//              its degree-7 Taylor polynomial, about 0.53 ulp); from 0.625 on the division and
//              the subtraction from 1 keep the error below about 1.7 eps.
// Measured against tanh in long double on 25 million points (uniform, log-uniform over every
// magnitude, near the 0.625 switch): at most 1.33 ulp, within 0.51 of the spec's tolerance
// against NumPy. tanh(nan) = nan, tanh(+-inf) = +-1, tanh(-0.0) = -0.0. `x` may be strided
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

// kExpH[j] = bits(round(2**(j/16))) - (j << 48); kExpT[j] = 2**(j/16) / H[j] - 1
// (the numpy.exp f64 kernel's tables, generated with 200-bit arithmetic).
static const uint64_t kExpH[16] = {
    0x3ff0000000000000ULL, 0x3fefb5586cf9890fULL, 0x3fef72b83c7d517bULL, 0x3fef387a6e756238ULL,
    0x3fef06fe0a31b715ULL, 0x3feedea64c123422ULL, 0x3feebfdad5362a27ULL, 0x3feeab07dd485429ULL,
    0x3feea09e667f3bcdULL, 0x3feea11473eb0187ULL, 0x3feeace5422aa0dbULL, 0x3feec49182a3f090ULL,
    0x3feee89f995ad3adULL, 0x3fef199bdd85529cULL, 0x3fef5818dcfba487ULL, 0x3fefa4afa2a490daULL,
};
static const double kExpT[16] = {
    0.0, 0x1.79aa65d837b6dp-54, -0x1.01b15eaa59348p-55, 0x1.68efde3a8a894p-54,
    0x1.34d754db0abb6p-55, 0x1.59f48a72a4c6dp-55, 0x1.690cebb7aafb0p-56, 0x1.063e1e21c5409p-54,
    -0x1.3b3efbf5e2228p-54, -0x1.b32dcb94da51dp-56, 0x1.db72fc1f0eab4p-55, 0x1.1affc2b91ce27p-56,
    0x1.c1a7792cb3387p-55, 0x1.36eae30af0cb3p-56, 0x1.4a385a63d07a7p-56, -0x1.ff7128fd391f0p-55,
};

// e^y for y in [0, 39]: y = (k/16) ln2 + r with |r| <= ln2/32 (ln2/16 in two parts),
// 2^(k/16) = 2^(k >> 4) * H[k & 15] * (1 + T[k & 15]), e^r - 1 by its degree-7 Taylor
// polynomial (truncation < 2^-59). No overflow or underflow can happen on this range.
inline v8d exp8(v8d y) {
  v8d kd = y * splat(0x1.71547652b82fep+4) + splat(0x1.8p52);  // 16/ln2; rounds k into the low bits
  const v8u ki = (v8u)kd;
  kd -= splat(0x1.8p52);
  const v8d r = (y - kd * splat(0x1.62e42fefa0000p-5)) - kd * splat(0x1.cf79abc9e3b3ap-44);
  const v8u idx = ki & 15u;
  v8d tail;
  v8u hbits;
#if defined(__AVX512F__)
  {
    __m512d t0, t1;
    __m512i h0, h1;
    std::memcpy(&t0, kExpT, 64);
    std::memcpy(&t1, kExpT + 8, 64);
    std::memcpy(&h0, kExpH, 64);
    std::memcpy(&h1, kExpH + 8, 64);
    tail = (v8d)_mm512_permutex2var_pd(t0, (__m512i)idx, t1);
    hbits = (v8u)_mm512_permutex2var_epi64(h0, (__m512i)idx, h1);
  }
#else
  for (int l = 0; l < 8; ++l) {
    tail[l] = kExpT[idx[l]];
    hbits[l] = kExpH[idx[l]];
  }
#endif
  const v8d scale = (v8d)(hbits + (ki << 48));  // k >> 4 lands in the exponent field
  const v8d r2 = r * r;
  const v8d r4 = r2 * r2;
  const v8d p = r + r2 * (0.5 + r * (1.0 / 6.0)) +
                r4 * ((1.0 / 24.0 + r * (1.0 / 120.0)) + r2 * (1.0 / 720.0 + r * (1.0 / 5040.0)));
  return scale + scale * (tail + p);
}

inline v8d tanh8(v8d x) {
  const v8u sign = (v8u)x & 0x8000000000000000ULL;
  v8d a = (v8d)((v8u)x & 0x7fffffffffffffffULL);
  a = a > splat(19.5) ? splat(19.5) : a;  // a nan fails the comparison and stays nan
  const v8d big = 1.0 - 2.0 / (1.0 + exp8(a + a));
  const v8d s = a * a;
  v8d q = splat(-0x1.0da6f5fd56a45p-16);
  q = q * s + 0x1.4391064e27804p-14;
  q = q * s + -0x1.df556d00aea41p-13;
  q = q * s + 0x1.3366113569a4dp-11;
  q = q * s + -0x1.7d68a2e8a3601p-10;
  q = q * s + 0x1.d6cf280736e6fp-9;
  q = q * s + -0x1.226e162bb507ep-7;
  q = q * s + 0x1.664f477ad7eaap-6;
  q = q * s + -0x1.ba1ba1b506389p-5;
  q = q * s + 0x1.111111110acccp-3;
  q = q * s + -0x1.55555555554ffp-2;
  const v8d small = (a * s) * q + a;
  const v8d res = a < splat(0.625) ? small : big;  // a nan takes `big`, which is nan
  return (v8d)((v8u)res | sign);
}

// n contiguous outputs from inputs `stride` elements apart (any stride: 0, negative).
void tanh_run(const double* x, int64_t stride, double* y, int64_t n) {
  int64_t i = 0;
  if (stride == 1) {
    for (; i + 8 <= n; i += 8) {
      v8d v;
      std::memcpy(&v, x + i, sizeof v);
      v = tanh8(v);
      std::memcpy(y + i, &v, sizeof v);
    }
  } else {
    for (; i + 8 <= n; i += 8) {
      const double* s = x + i * stride;
      v8d v = {s[0], s[1 * stride], s[2 * stride], s[3 * stride], s[4 * stride], s[5 * stride], s[6 * stride], s[7 * stride]};
      v = tanh8(v);
      std::memcpy(y + i, &v, sizeof v);
    }
  }
  if (i < n) {  // the tail, through a buffer padded with harmless lanes
    double buf[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    for (int64_t j = i; j < n; ++j) buf[j - i] = x[j * stride];
    v8d v;
    std::memcpy(&v, buf, sizeof v);
    v = tanh8(v);
    std::memcpy(buf, &v, sizeof v);
    for (int64_t j = i; j < n; ++j) y[j] = buf[j - i];
  }
}

}  // namespace

void numpy_tanh__f64(const opgen::Tensor& x, opgen::Tensor& out) {
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
    tanh_run(src, 1, dst, 1);
    return;
  }
  const int64_t run = shape[nd - 1], run_stride = stride[nd - 1];
  const int64_t runs = total / run;
  int64_t idx[OPGEN_MAX_DIMS] = {};
  int64_t off = 0;
  for (int64_t r = 0; r < runs; ++r) {
    tanh_run(src + off, run_stride, dst + r * run, run);
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
