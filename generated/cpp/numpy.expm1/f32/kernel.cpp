// numpy.expm1, overload f32: out[i] = e^x[i] - 1 elementwise for float32 tensors.
//
// Each element is widened to double and evaluated there, eight lanes at a time with GCC vector
// extensions, no branches, then rounded once to float32 (within about 0.5 float32 ulp + 2^-45 of
// the true value):
//   |x| < 0.5:  expm1(x) = x * (1 + x/2! + x^2/3! + ... + x^12/13!) (truncation below 1e-13
//               relative; the product form keeps expm1(-0.0) = -0.0 and gives x itself for tiny x,
//               float32 subnormals included);
//   otherwise:  x clamped to [-104, 89] (past float32's saturation to -1 and its overflow; a nan
//               fails both comparisons and stays nan), x = k ln2 + r with k the nearest integer to
//               x / ln2 (by the 1.5 * 2^52 shift), ln2 in two parts (k ln2_hi exact), |r| <= ln2/2,
//               e^r by its Taylor series to r^12, 2^k from k's bits, expm1 = 2^k e^r - 1, which
//               loses nothing because |expm1(x)| >= 0.39 there.
// expm1(inf) = inf (89 overflows float32), expm1(-inf) = -1, expm1(nan) = nan.
// `x` may be strided (any strides, including 0 and negative), 0-d or empty; `out` is contiguous
// with x's shape. Dims of size 1 are dropped and mergeable neighbours merged.
#include "opgen_kernel.hpp"

#include <cstdint>
#include <cstring>

namespace opgen::kernels {

namespace {

// The vector types below never cross a library boundary; silence GCC's note that their
// calling convention depends on -m flags (it appears when -march lacks AVX/AVX-512).
#pragma GCC diagnostic ignored "-Wpsabi"

typedef float v8f __attribute__((vector_size(32)));
typedef double v8d __attribute__((vector_size(64)));
typedef int64_t v8l __attribute__((vector_size(64)));
typedef uint64_t v8u __attribute__((vector_size(64)));

inline v8d splat(double v) { return v8d{} + v; }

constexpr double kInvLn2 = 0x1.71547652b82fep+0;
constexpr double kShift = 0x1.8p52;
constexpr uint64_t kShiftBits = 0x4338000000000000ull;
constexpr double kLn2Hi = 0x1.62e42feep-1;  // 32 significant bits: k ln2_hi is exact for |k| < 2^21
constexpr double kLn2Lo = 0x1.a39ef35793c76p-33;
// 1/n! for n = 0..13
constexpr double kF[14] = {1.0, 1.0, 0x1p-1, 0x1.5555555555555p-3, 0x1.5555555555555p-5, 0x1.1111111111111p-7,
                           0x1.6c16c16c16c17p-10, 0x1.a01a01a01a01ap-13, 0x1.a01a01a01a01ap-16,
                           0x1.71de3a556c734p-19, 0x1.27e4fb7789f5cp-22, 0x1.ae64567f544e4p-26,
                           0x1.1eed8eff8d898p-29, 0x1.6124613a86d09p-33};

inline v8f op8(v8f xf) {
  const v8d x = __builtin_convertvector(xf, v8d);
  // small: x * sum_{n=0..12} x^n / (n+1)!
  v8d p = splat(kF[13]);
  for (int n = 12; n >= 1; --n) p = p * x + kF[n];
  const v8d small = x * p;
  // large
  v8d xc = x > 89.0 ? splat(89.0) : x;
  xc = xc < -104.0 ? splat(-104.0) : xc;
  const v8d kd0 = xc * kInvLn2 + kShift;
  const v8u k = (v8u)kd0 - kShiftBits;  // k, two's complement
  const v8d kd = kd0 - kShift;
  v8d r = xc - kd * kLn2Hi;
  r = r - kd * kLn2Lo;
  v8d e = splat(kF[12]);
  for (int n = 11; n >= 0; --n) e = e * r + kF[n];
  const v8d scale = (v8d)((k + 1023) << 52);
  const v8d big = scale * e - 1.0;
  const v8d ax = x < 0 ? -x : x;
  const v8d v = ax < 0.5 ? small : big;
  return __builtin_convertvector(v, v8f);
}

inline void op_block(const float* in, float* y) {
  v8f v;
  std::memcpy(&v, in, sizeof v);
  const v8f o = op8(v);
  std::memcpy(y, &o, sizeof o);
}

// n contiguous outputs from inputs `stride` elements apart (any stride: 0, negative).
void op_run(const float* x, int64_t stride, float* y, int64_t n) {
  int64_t i = 0;
  if (stride == 1) {
    for (; i + 8 <= n; i += 8) op_block(x + i, y + i);
  } else {
    for (; i + 8 <= n; i += 8) {
      const float* s = x + i * stride;
      float buf[8] = {s[0], s[stride], s[2 * stride], s[3 * stride], s[4 * stride], s[5 * stride], s[6 * stride], s[7 * stride]};
      op_block(buf, y + i);
    }
  }
  if (i < n) {  // the tail, through a buffer padded with harmless lanes
    float buf[8] = {0, 0, 0, 0, 0, 0, 0, 0}, res[8];
    for (int64_t j = i; j < n; ++j) buf[j - i] = x[j * stride];
    op_block(buf, res);
    for (int64_t j = i; j < n; ++j) y[j] = res[j - i];
  }
}

}  // namespace

void numpy_expm1__f32(const opgen::Tensor& x, opgen::Tensor& out) {
  const int64_t total = x.numel();
  if (total == 0) return;
  const float* src = x.data<float>();
  float* dst = out.data<float>();
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
    op_run(src, 1, dst, 1);
    return;
  }
  const int64_t run = shape[nd - 1], run_stride = stride[nd - 1];
  const int64_t runs = total / run;
  int64_t idx[OPGEN_MAX_DIMS] = {};
  int64_t off = 0;
  for (int64_t r = 0; r < runs; ++r) {
    op_run(src + off, run_stride, dst + r * run, run);
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
