// numpy.ceil, overload f64: out[i] = ceil(x[i]) elementwise for float64 tensors.
//
// The result is the smallest integer value not less than x[i]: ceil(-0.0) = -0.0,
// ceil(-0.5) = -0.0 (not +0.0), ceil(0.5) = 1.0; inf, -inf and values with |x| >= 2^52 (already integers) are
// returned unchanged, nan stays nan, with no conversion through an integer type. With
// AVX-512 one vrndscale per 8 lanes does it (the rounding direction is in the instruction,
// not MXCSR); without it, std::ceil per lane.
// 8 lanes at a time with GCC vector extensions (one 512-bit register with AVX-512), no
// branches. `x` may be strided (any strides, including 0 and negative), 0-d or empty; `out` is
// contiguous with x's shape. Dims of size 1 are dropped and mergeable neighbours merged, so a
// contiguous (or contiguous-in-rows) input is one long vector loop. An output of 8 MiB or more
// from a contiguous input is written with non-temporal stores (AVX-512), which skip reading
// `out` into the cache first; smaller outputs stay in the cache for whatever reads them next.
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

constexpr int L = 8;
typedef double V __attribute__((vector_size(64)));
typedef int64_t M __attribute__((vector_size(64)));

constexpr int64_t kStreamBytes = int64_t(8) << 20;

struct Op {
  inline V operator()(V v) const {
#if defined(__AVX512F__)
    // vrndscalepd: IEEE roundToIntegral in the given direction; keeps the sign of zero,
    // returns inf and every already-integral value (|x| >= 2^52) unchanged, quiets nan.
    return (V)_mm512_roundscale_pd((__m512d)v, _MM_FROUND_TO_POS_INF | _MM_FROUND_NO_EXC);
#else
    V r;
    for (int k = 0; k < L; ++k) r[k] = std::ceil(v[k]);
    return r;
#endif
  }
};

// n contiguous outputs from inputs `stride` elements apart (any stride: 0, negative).
void run(const Op& op, const double* x, int64_t stride, double* y, int64_t n) {
  int64_t i = 0;
  if (stride == 1) {
    for (; i + L <= n; i += L) {
      V v;
      std::memcpy(&v, x + i, sizeof v);
      v = op(v);
      std::memcpy(y + i, &v, sizeof v);
    }
  } else {
    for (; i + L <= n; i += L) {
      const double* s = x + i * stride;
      V v;
      for (int k = 0; k < L; ++k) v[k] = s[k * stride];
      v = op(v);
      std::memcpy(y + i, &v, sizeof v);
    }
  }
  if (i < n) {  // the tail, through a buffer padded with harmless lanes
    double buf[L] = {};
    for (int64_t j = i; j < n; ++j) buf[j - i] = x[j * stride];
    V v;
    std::memcpy(&v, buf, sizeof v);
    v = op(v);
    std::memcpy(buf, &v, sizeof v);
    for (int64_t j = i; j < n; ++j) y[j] = buf[j - i];
  }
}

// A contiguous run of n elements with non-temporal stores: scalar lanes up to the first 64-byte
// boundary of y, then whole vectors streamed, then the tail.
void run_streaming(const Op& op, const double* x, double* y, int64_t n) {
#if defined(__AVX512F__)
  int64_t head = 0;
  while (head < n && (reinterpret_cast<uintptr_t>(y + head) & 63) != 0) ++head;
  run(op, x, 1, y, head);
  int64_t i = head;
  for (; i + L <= n; i += L) {
    V v;
    std::memcpy(&v, x + i, sizeof v);
    v = op(v);
    _mm512_stream_pd((double*)(y + i), (__m512d)v);
  }
  _mm_sfence();
  run(op, x + i, 1, y + i, n - i);
#else
  run(op, x, 1, y, n);
#endif
}

}  // namespace

void numpy_ceil__f64(const opgen::Tensor& x, opgen::Tensor& out) {
  const int64_t total = x.numel();
  if (total == 0) return;
  const double* src = x.data<double>();
  double* dst = out.data<double>();
  const Op op{};
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
    run(op, src, 1, dst, 1);
    return;
  }
  if (nd == 1 && stride[0] == 1 && total * int64_t(sizeof(double)) >= kStreamBytes) {
    run_streaming(op, src, dst, total);
    return;
  }
  const int64_t len = shape[nd - 1], len_stride = stride[nd - 1];
  const int64_t runs = total / len;
  int64_t idx[OPGEN_MAX_DIMS] = {};
  int64_t off = 0;
  for (int64_t r = 0; r < runs; ++r) {
    run(op, src + off, len_stride, dst + r * len, len);
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
