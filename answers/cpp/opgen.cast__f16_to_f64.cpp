// opgen.cast, overload f16_to_f64: out = x.astype(float64) elementwise, float16 -> float64.
//
// Conversion: exact (the float16's fields moved into a double's).
// `x` may be strided (any strides, including 0 and negative), 0-d or empty; `out` is contiguous with
// x's shape. Dims of size 1 are dropped and mergeable neighbours merged, so a contiguous input is one
// long loop. Written by scripts/cast_kernels.py (the walk is the same for every pair).
#include "opgen_kernel.hpp"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <immintrin.h>

namespace opgen::kernels {

namespace {

using From = _Float16;
using To = double;

inline double half_to_double(From v) {
  uint16_t h;
  std::memcpy(&h, &v, sizeof h);
  const uint64_t sign = uint64_t(h >> 15) << 63;
  const int exp = (h >> 10) & 0x1f;
  uint64_t man = h & 0x3ff;
  uint64_t bits;
  if (exp == 0x1f) {
    bits = sign | (uint64_t(0x7ff) << 52) | (man << 42);  // inf, or nan with its payload
  } else if (exp != 0) {
    bits = sign | (uint64_t(exp - 15 + 1023) << 52) | (man << 42);
  } else if (man == 0) {
    bits = sign;  // +-0
  } else {  // subnormal: (man / 1024) * 2**-14, normalised to 1.f * 2**e
    int e = -14;
    while (!(man & 0x400)) {
      man <<= 1;
      --e;
    }
    bits = sign | (uint64_t(e + 1023) << 52) | ((man & 0x3ff) << 42);
  }
  double d;
  std::memcpy(&d, &bits, sizeof d);
  return d;
}

// Converts the first multiple of 16 elements of a contiguous run with the vector instructions (GCC
// converts _Float16 one element at a time); returns how many it converted. vcvtph2ps widens exactly;
// vcvtneps2bf16 rounds to nearest even and quiets a nan as opgen::to_bfloat16 does (it flushes
// float32 subnormals, which no float16 value becomes).
inline int64_t convert_block(const From* s, To* o, int64_t n) {
  int64_t i = 0;
#if defined(__AVX512F__) && defined(__AVX512DQ__)
  for (; i + 16 <= n; i += 16) {
    const __m512 f = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + i)));
    _mm512_storeu_pd(o + i, _mm512_cvtps_pd(_mm512_castps512_ps256(f)));
    _mm512_storeu_pd(o + i + 8, _mm512_cvtps_pd(_mm512_extractf32x8_ps(f, 1)));
  }
#else
  (void)s;
  (void)o;
  (void)n;
#endif
  return i;
}

inline To convert(From v) {
  return half_to_double(v);
}

}  // namespace

void opgen_cast__f16_to_f64(const opgen::Tensor& x, opgen::Tensor& out) {
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
      for (int64_t i = convert_block(s, o, run); i < run; ++i) o[i] = convert(s[i]);
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
