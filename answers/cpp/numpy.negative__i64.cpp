// numpy.negative, overload i64: out[i] = -x[i] elementwise for int64 tensors.
//
// Two's complement negation modulo 2**64, as NumPy and PyTorch compute it on int64: negative(-2**63)
// is -2**63 (it wraps; no error). Signed overflow is undefined in C++, so the negation is done on
// uint64_t (0 - x), where it is defined to wrap, and read back as int64_t (modular, C++20 and GCC
// in every mode).
// 8 lanes at a time with GCC vector extensions (one 512-bit register with AVX-512), no
// branches. `x` may be strided (any strides, including 0 and negative), 0-d or empty; `out` is
// contiguous with x's shape. Dims of size 1 are dropped and mergeable neighbours merged, so a
// contiguous (or contiguous-in-rows) input is one long vector loop. This op moves memory more
// than it computes: an output of 8 MiB or more from a contiguous input is written with
// non-temporal stores (AVX-512), which skip reading `out` into the cache first and keep the
// input cached; smaller outputs stay in the cache for whatever reads them next.
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

typedef int64_t v8i __attribute__((vector_size(64)));
typedef uint64_t v8u __attribute__((vector_size(64)));

constexpr int64_t kStreamBytes = int64_t(8) << 20;

inline v8i op8(v8i v) {
  return (v8i)((v8u){} - (v8u)v);  // 0 - x on unsigned lanes: wraps, -(-2**63) is -2**63
}

// n contiguous outputs from inputs `stride` elements apart (any stride: 0, negative).
void negative_run(const int64_t* x, int64_t stride, int64_t* y, int64_t n) {
  int64_t i = 0;
  if (stride == 1) {
    for (; i + 8 <= n; i += 8) {
      v8i v;
      std::memcpy(&v, x + i, sizeof v);
      v = op8(v);
      std::memcpy(y + i, &v, sizeof v);
    }
  } else {
    for (; i + 8 <= n; i += 8) {
      const int64_t* s = x + i * stride;
      v8i v = {s[0], s[1 * stride], s[2 * stride], s[3 * stride], s[4 * stride], s[5 * stride], s[6 * stride], s[7 * stride]};
      v = op8(v);
      std::memcpy(y + i, &v, sizeof v);
    }
  }
  if (i < n) {  // the tail, through a buffer padded with harmless lanes
    int64_t buf[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    for (int64_t j = i; j < n; ++j) buf[j - i] = x[j * stride];
    v8i v;
    std::memcpy(&v, buf, sizeof v);
    v = op8(v);
    std::memcpy(buf, &v, sizeof v);
    for (int64_t j = i; j < n; ++j) y[j] = buf[j - i];
  }
}

// A contiguous run of n elements with non-temporal stores: scalar lanes up to the first 64-byte
// boundary of y, then whole vectors streamed, then the tail.
void run_streaming(const int64_t* x, int64_t* y, int64_t n) {
#if defined(__AVX512F__)
  int64_t head = 0;
  while (head < n && (reinterpret_cast<uintptr_t>(y + head) & 63) != 0) ++head;
  negative_run(x, 1, y, head);
  int64_t i = head;
  for (; i + 8 <= n; i += 8) {
    v8i v;
    std::memcpy(&v, x + i, sizeof v);
    v = op8(v);
    _mm512_stream_si512(reinterpret_cast<__m512i*>(y + i), (__m512i)v);
  }
  _mm_sfence();
  negative_run(x + i, 1, y + i, n - i);
#else
  negative_run(x, 1, y, n);
#endif
}

}  // namespace

void numpy_negative__i64(const opgen::Tensor& x, opgen::Tensor& out) {
  const int64_t total = x.numel();
  if (total == 0) return;
  const int64_t* src = x.data<int64_t>();
  int64_t* dst = out.data<int64_t>();
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
    negative_run(src, 1, dst, 1);
    return;
  }
  if (nd == 1 && stride[0] == 1 && total * int64_t(sizeof(int64_t)) >= kStreamBytes) {
    run_streaming(src, dst, total);
    return;
  }
  const int64_t run = shape[nd - 1], run_stride = stride[nd - 1];
  const int64_t runs = total / run;
  int64_t idx[OPGEN_MAX_DIMS] = {};
  int64_t off = 0;
  for (int64_t r = 0; r < runs; ++r) {
    negative_run(src + off, run_stride, dst + r * run, run);
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
