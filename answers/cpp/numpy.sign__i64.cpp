// numpy.sign, overload i64: out[i] = sign(x[i]) elementwise for int64 tensors.
//
// -1, 0 or 1 as x[i] is negative, zero or positive, exactly (no overflow at -2^63).
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
typedef int64_t V __attribute__((vector_size(64)));
typedef int64_t M __attribute__((vector_size(64)));

constexpr int64_t kStreamBytes = int64_t(8) << 20;

struct Op {
  // (x > 0) - (x < 0) with lane masks (-1 where true): lt - gt.
  inline V operator()(V v) const { return (V)((v < V{}) - (v > V{})); }
};

// n contiguous outputs from inputs `stride` elements apart (any stride: 0, negative).
void run(const Op& op, const int64_t* x, int64_t stride, int64_t* y, int64_t n) {
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
      const int64_t* s = x + i * stride;
      V v;
      for (int k = 0; k < L; ++k) v[k] = s[k * stride];
      v = op(v);
      std::memcpy(y + i, &v, sizeof v);
    }
  }
  if (i < n) {  // the tail, through a buffer padded with harmless lanes
    int64_t buf[L] = {};
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
void run_streaming(const Op& op, const int64_t* x, int64_t* y, int64_t n) {
#if defined(__AVX512F__)
  int64_t head = 0;
  while (head < n && (reinterpret_cast<uintptr_t>(y + head) & 63) != 0) ++head;
  run(op, x, 1, y, head);
  int64_t i = head;
  for (; i + L <= n; i += L) {
    V v;
    std::memcpy(&v, x + i, sizeof v);
    v = op(v);
    _mm512_stream_si512((__m512i*)(y + i), (__m512i)v);
  }
  _mm_sfence();
  run(op, x + i, 1, y + i, n - i);
#else
  run(op, x, 1, y, n);
#endif
}

}  // namespace

void numpy_sign__i64(const opgen::Tensor& x, opgen::Tensor& out) {
  const int64_t total = x.numel();
  if (total == 0) return;
  const int64_t* src = x.data<int64_t>();
  int64_t* dst = out.data<int64_t>();
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
  if (nd == 1 && stride[0] == 1 && total * int64_t(sizeof(int64_t)) >= kStreamBytes) {
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
