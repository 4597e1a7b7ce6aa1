// numpy.log1p, overload f32: out[i] = log(1 + x[i]) elementwise for float32 tensors.
//
// Each element is widened to double and evaluated there, eight lanes at a time with GCC vector
// extensions, no branches (the division overlaps the multiply-adds), then rounded once to float32
// (within about 0.5 float32 ulp + 2^-45 of the true value):
//   |x| < 2^-29: log1p(x) = x (1 - x/2) (the rest is below 2^-58 relative; the product form keeps
//                log1p(-0.0) = -0.0 and gives x itself for float32 subnormals);
//   otherwise:   y = 1 + x, exact in double for every float32 x with 2^-29 <= |x| < 2^29 (and for
//                larger x its rounding is far below float32's ulp of the log); y = 2^k m with
//                m in [sqrt(1/2), sqrt(2)) read from y's bits, log(m) = 2 atanh(s) with
//                s = (m - 1) / (m + 1), |s| <= 0.1716, by its series to s^21 (truncation below
//                1e-17), log1p(x) = k ln2 + log(m).
// y = 0 (x = -1) gives -inf, y < 0 (x < -1, -inf) and nan give nan, y = inf gives inf: selected
// at the end. `x` may be strided (any strides, including 0 and negative), 0-d or empty; `out` is
// contiguous with x's shape. Dims of size 1 are dropped and mergeable neighbours merged.
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

constexpr uint64_t kSqrtHalfBits = 0x3fe6a09e667f3bcdull;
constexpr double kLn2 = 0x1.62e42fefa39efp-1;
// 1/(2n+1) for n = 1..10
constexpr double kInvOdd[11] = {1.0, 0x1.5555555555555p-2, 0x1.999999999999ap-3, 0x1.2492492492492p-3,
                                0x1.c71c71c71c71cp-4, 0x1.745d1745d1746p-4, 0x1.3b13b13b13b14p-4,
                                0x1.1111111111111p-4, 0x1.e1e1e1e1e1e1ep-5, 0x1.af286bca1af28p-5,
                                0x1.8618618618618p-5};

inline v8f op8(v8f xf) {
  const v8d x = __builtin_convertvector(xf, v8d);
  const v8d small = x * (1.0 - 0.5 * x);
  const v8d y = 1.0 + x;
  const v8u u = (v8u)y - kSqrtHalfBits;
  const v8l k = (v8l)u >> 52;  // y's exponent, shifted so that m straddles 1
  const v8d m = (v8d)((v8u)y - ((v8u)k << 52));
  const v8d f = m - 1.0;
  const v8d s = f / (f + 2.0);
  const v8d z = s * s;
  v8d t = splat(kInvOdd[10]);
  for (int n = 9; n >= 0; --n) t = t * z + kInvOdd[n];
  v8d big = __builtin_convertvector(k, v8d) * kLn2 + (s + s) * t;
  big = y == __builtin_inf() ? y : big;
  big = y == 0.0 ? splat(-__builtin_inf()) : big;
  big = y >= 0.0 ? big : splat(__builtin_nan(""));  // y < 0 and nan
  const v8d ax = x < 0 ? -x : x;
  const v8d v = ax < 0x1p-29 ? small : big;
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

void numpy_log1p__f32(const opgen::Tensor& x, opgen::Tensor& out) {
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
