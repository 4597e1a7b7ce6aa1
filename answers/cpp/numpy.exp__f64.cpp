// numpy.exp, overload f64: out[i] = exp(x[i]) elementwise for float64 tensors.
//
// Table-driven exp in the style of glibc / ARM optimized-routines, eight lanes at a
// time with GCC vector extensions:
//   k = round(x * 16/ln2), r = x - k*ln2/16 (two-part ln2, |r| <= ln2/32),
//   2**(k/16) = 2**(k>>4) * H[k & 15] * (1 + T[k & 15]) from a 16-entry table (H is
//   2**(j/16) rounded to double, T its relative correction),
//   exp(r) - 1 by its degree-7 Taylor polynomial (truncation < 2**-59 on |r| <= ln2/32),
//   exp(x) = s + s * (T + (exp(r) - 1)), with s = 2**(k/16) assembled in the exponent bits.
// Max error about 0.53 ulp (measured against 100-bit arithmetic), no branches. With
// AVX-512 the table lookups are register permutes; elsewhere they are plain loads.
// Results near overflow and in the subnormal range are built 2**64 closer to 1 and then
// scaled (subnormal results are thus rounded twice: up to ~0.75 ulp); x > 709.79 gives
// inf, x < -745.2 gives 0, exp(nan) = nan, exp(-0.0) = 1. `x` may be strided (any
// strides, including 0 and negative), 0-d or empty; `out` is contiguous with x's shape.
#include "opgen_kernel.hpp"

#include <cstdint>
#include <cstring>
#include <limits>
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

// kExpH[j] = bits(round(2**(j/16))) - (j << 48); kExpT[j] = 2**(j/16) / H[j] - 1
// (generated with 200-bit arithmetic).
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

inline v8d splat(double v) { return v8d{v, v, v, v, v, v, v, v}; }

// exp of eight lanes, max error about 0.53 ulp (~0.75 ulp for subnormal results).
inline v8d exp8(v8d x) {
  const v8d kInvLn2N = splat(0x1.71547652b82fep+4);   // 16/ln2
  const v8d kShift = splat(0x1.8p52);                 // rounds to an integer in the low bits
  const v8d kLn2HiN = splat(0x1.62e42fefa0000p-5);    // ln2/16, high part (k*hi is exact)
  const v8d kLn2LoN = splat(0x1.cf79abc9e3b3ap-44);   // ln2/16 - hi
  v8d kd = x * kInvLn2N + kShift;
  const v8u ki = (v8u)kd;
  kd -= kShift;
  const v8d r = (x - kd * kLn2HiN) - kd * kLn2LoN;
  const v8u idx = ki & 15u;
  const v8u top = ki << 48;  // k >> 4 lands in the exponent field (two's complement wraps)
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
  // Beyond |x| = 704 the scale 2**(k/16) would leave the normal range: build it 2**64
  // closer to 1 and multiply by 2**-64 or 2**64 afterwards (one rounding, into the
  // subnormals or to inf).
  const v8i low = x < splat(-704.0);
  const v8i high = x > splat(704.0);
  const uint64_t k64 = uint64_t(64) << 52;
  const v8u adj = ((v8u)low & k64) - ((v8u)high & k64);
  const v8d scale = (v8d)(hbits + top + adj);
  const v8d r2 = r * r;
  const v8d r4 = r2 * r2;
  // exp(r) - 1 = r + r2*(1/2 + r/6) + r4*(1/24 + r/120 + r2*(1/720 + r/5040))
  const v8d p = r + r2 * (0.5 + r * (1.0 / 6.0)) +
                r4 * ((1.0 / 24.0 + r * (1.0 / 120.0)) + r2 * (1.0 / 720.0 + r * (1.0 / 5040.0)));
  const v8d undo = (v8d)(v8u{0, 0, 0, 0, 0, 0, 0, 0} + (uint64_t(0x3ff) << 52) - adj);  // 2**-64, 2**64 or 1
  v8d y = (scale + scale * (tail + p)) * undo;
  // Past the ends (and for +-inf, where r is nan) the answer is known outright.
  // A nan x makes r and so y nan.
  y = x > splat(709.79) ? splat(std::numeric_limits<double>::infinity()) : y;
  y = x < splat(-745.2) ? splat(0.0) : y;
  return y;
}

// n contiguous outputs from inputs `stride` elements apart.
void exp_run(const double* x, int64_t stride, double* y, int64_t n) {
  int64_t i = 0;
  if (stride == 1) {
    for (; i + 8 <= n; i += 8) {
      v8d v;
      std::memcpy(&v, x + i, sizeof v);
      v = exp8(v);
      std::memcpy(y + i, &v, sizeof v);
    }
  } else {
    for (; i + 8 <= n; i += 8) {
      const double* s = x + i * stride;
      v8d v = {s[0], s[stride], s[2 * stride], s[3 * stride], s[4 * stride], s[5 * stride], s[6 * stride], s[7 * stride]};
      v = exp8(v);
      std::memcpy(y + i, &v, sizeof v);
    }
  }
  if (i < n) {
    double buf[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    for (int64_t j = i; j < n; ++j) buf[j - i] = x[j * stride];
    v8d v;
    std::memcpy(&v, buf, sizeof v);
    v = exp8(v);
    std::memcpy(buf, &v, sizeof v);
    for (int64_t j = i; j < n; ++j) y[j] = buf[j - i];
  }
}

}  // namespace

void numpy_exp__f64(const opgen::Tensor& x, opgen::Tensor& out) {
  const int64_t total = x.numel();
  if (total == 0) return;
  const double* src = x.data<double>();
  double* dst = out.data<double>();
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
