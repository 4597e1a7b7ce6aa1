// opgen.cast, overload i32_to_f16: out = x.astype(float16) elementwise, int32 -> float16.
//
// Conversion: one rounding: to float with round-to-odd first (a 64-bit int has more bits than a float), then nearest even to the half type, which equals rounding the int directly.
// `x` may be strided (any strides, including 0 and negative), 0-d or empty; `out` is contiguous with
// x's shape. Dims of size 1 are dropped and mergeable neighbours merged, so a contiguous input is one
// long loop. Written by scripts/cast_kernels.py (the walk is the same for every pair).
#include "opgen_kernel.hpp"

#include <cmath>
#include <cstdint>
#include <cstring>

namespace opgen::kernels {

namespace {

using From = int32_t;
using To = _Float16;

// Round-to-odd narrowing: the float nearest toward zero, with its last bit forced to 1 when the
// conversion was inexact. Rounding that float to a type with at most 11 significant bits (float16,
// bfloat16) gives the correctly rounded result of the original value (round-to-odd needs 2p + 2 bits
// for p-bit targets, and float has 24), where rounding to float to nearest first could round twice.
inline float narrow_odd(double v) {
  float f = static_cast<float>(v);
  if (!(static_cast<double>(f) != v) || std::isnan(v)) return f;  // exact (or nan): nothing lost
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  // f was rounded away from zero: step back to the float below |v| (the bit pattern of a float's
  // magnitude is monotonic, and an infinite f steps back to FLT_MAX).
  if (std::fabs(static_cast<double>(f)) > std::fabs(v)) u -= 1;
  u |= 1u;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

inline float int_to_float_odd(int64_t v) {
  const bool neg = v < 0;
  uint64_t m = neg ? uint64_t(0) - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
  int shift = 0;
  if (m >= (uint64_t(1) << 24)) {
    shift = 64 - __builtin_clzll(m) - 24;  // keep the top 24 bits
    const bool sticky = (m & ((uint64_t(1) << shift) - 1)) != 0;
    m = (m >> shift) | (sticky ? 1u : 0u);
  }
  const float f = std::ldexp(static_cast<float>(m), shift);  // exact: m has at most 24 bits
  return neg ? -f : f;
}

inline To convert(From v) {
  return static_cast<_Float16>(int_to_float_odd(v));
}

}  // namespace

void opgen_cast__i32_to_f16(const opgen::Tensor& x, opgen::Tensor& out) {
  const int64_t total = x.numel();
  if (total == 0) return;
  const From* src = x.data<From>();
  To* dst = out.data<To>();
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
  if (nd == 0) {
    dst[0] = convert(src[0]);
    return;
  }
  const int64_t run = shape[nd - 1], rs = stride[nd - 1];
  int64_t idx[OPGEN_MAX_DIMS] = {};
  int64_t off = 0;
  for (int64_t e = 0; e < total; e += run) {
    const From* s = src + off;
    To* o = dst + e;
    if (rs == 1) {
      for (int64_t i = 0; i < run; ++i) o[i] = convert(s[i]);
    } else {
      for (int64_t i = 0; i < run; ++i) o[i] = convert(s[i * rs]);
    }
    for (int d = nd - 2; d >= 0; --d) {  // next run
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
