// torch.rsqrt, overload f32: out[i] = 1 / sqrt(input[i]) elementwise for float32 tensors.
//
// One correctly rounded IEEE square root and one correctly rounded division per element, in the
// tensor's own dtype, exactly as torch computes it on the CPU (bit for bit): 16 lanes at a time
// with AVX-512 (vsqrtps then vdivps; never the rsqrt estimate instructions), std::sqrt per
// lane without AVX-512. rsqrt(+0.0) = inf, rsqrt(-0.0) = -inf (sqrt(-0.0) = -0.0), x < 0 and
// -inf give nan, rsqrt(inf) = 0, nan gives nan, subnormals give large finite results.
// `input` may be strided (any strides, including 0 and negative), 0-d or empty; `out` is
// contiguous with input's shape. Dims of size 1 are dropped and mergeable neighbours merged.
#include "opgen_kernel.hpp"

#include <cmath>
#include <cstdint>
#include <cstring>
#if defined(__AVX512F__)
#include <immintrin.h>
#endif

namespace opgen::kernels {

namespace {

#pragma GCC diagnostic ignored "-Wpsabi"

constexpr int kLanes = 16;

inline void op_block(const float* in, float* y) {
#if defined(__AVX512F__)
  __m512 v;
  std::memcpy(&v, in, sizeof v);
  v = _mm512_div_ps(_mm512_set1_ps(1.0f), _mm512_sqrt_ps(v));
  std::memcpy(y, &v, sizeof v);
#else
  for (int l = 0; l < kLanes; ++l) y[l] = 1.0f / std::sqrt(in[l]);
#endif
}

// n contiguous outputs from inputs `stride` elements apart (any stride: 0, negative).
void op_run(const float* x, int64_t stride, float* y, int64_t n) {
  int64_t i = 0;
  if (stride == 1) {
    for (; i + kLanes <= n; i += kLanes) op_block(x + i, y + i);
  } else {
    for (; i + kLanes <= n; i += kLanes) {
      float buf[kLanes];
      for (int l = 0; l < kLanes; ++l) buf[l] = x[(i + l) * stride];
      op_block(buf, y + i);
    }
  }
  for (; i < n; ++i) y[i] = 1.0f / std::sqrt(x[i * stride]);
}

}  // namespace

void torch_rsqrt__f32(const opgen::Tensor& x, opgen::Tensor& out) {
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
