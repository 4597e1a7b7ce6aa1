// Honest: torch.nn.functional.softmax f32 with an online (single-pass) softmax, the
// formulation of flash attention and GPU softmax kernels (Milakov & Gimelshein 2018): one
// pass keeps a running max m and a running sum d of exp(x - m) in float32, rescaling d by
// exp(m_old - m_new) whenever the max grows; a second pass writes exp(x - m) / d. All in
// float32 with expf. The sum's error is that of a float32 sum of n terms in [0, 1] (plus
// one rounding per rescale), well inside the spec's 5e-5 at the rows models use; the
// exps are within an ulp. nan anywhere, a +inf or a slice of all -inf gives nan for the
// whole slice; other -inf entries get exactly 0. Must be admitted by every stage, the
// scale stage included.
#include "opgen_kernel.hpp"

#include <cmath>
#include <cstdint>
#include <limits>

namespace opgen::kernels {

namespace {

void softmax_slice(const float* x, int64_t s, int64_t n, float* y, int64_t ys) {
  const float ninf = -std::numeric_limits<float>::infinity();
  float m = ninf, d = 0.0f;
  bool bad = false;
  for (int64_t i = 0; i < n; ++i) {
    const float v = x[i * s];
    if (v != v || v == -ninf) {
      bad = true;
      break;
    }
    if (v == ninf) continue;  // probability 0, unless the whole slice is -inf
    if (v > m) {
      d = d * expf(m - v) + 1.0f;  // (d == 0 while m == -inf: expf(-inf) = 0)
      m = v;
    } else {
      d += expf(v - m);
    }
  }
  if (bad || m == ninf) {
    for (int64_t i = 0; i < n; ++i) y[i * ys] = std::numeric_limits<float>::quiet_NaN();
    return;
  }
  const float inv = 1.0f / d;
  for (int64_t i = 0; i < n; ++i) y[i * ys] = expf(x[i * s] - m) * inv;
}

}  // namespace

void torch_nn_functional_softmax__f32(const opgen::Tensor& x, int64_t dim, opgen::Tensor& out) {
  const int nd = x.ndim();
  const int rank = nd == 0 ? 1 : nd;
  if (dim < -rank || dim >= rank) throw opgen::Error(opgen::ErrorKind::Value, "dim out of range");
  if (dim < 0) dim += rank;
  if (x.numel() == 0) return;
  const float* src = x.data<float>();
  float* dst = out.data<float>();
  if (nd == 0) {
    softmax_slice(src, 1, 1, dst, 1);
    return;
  }
  const int sd = static_cast<int>(dim);
  const int64_t D = x.size(sd), sD = x.stride(sd);
  // out is contiguous: the stride of `dim` in out, and the slices' starts.
  int64_t ostr[OPGEN_MAX_DIMS];
  int64_t acc = 1;
  for (int d = nd - 1; d >= 0; --d) {
    ostr[d] = acc;
    acc *= x.size(d);
  }
  const int64_t slices = x.numel() / D;
  int64_t idx[OPGEN_MAX_DIMS] = {};
  for (int64_t t = 0; t < slices; ++t) {
    int64_t xo = 0, oo = 0;
    for (int d = 0; d < nd; ++d) {
      xo += idx[d] * x.stride(d);
      oo += idx[d] * ostr[d];
    }
    softmax_slice(src + xo, sD, D, dst + oo, ostr[sd]);
    for (int d = nd - 1; d >= 0; --d) {  // next slice: every dim but `dim`
      if (d == sd) continue;
      if (++idx[d] < x.size(d)) break;
      idx[d] = 0;
    }
  }
}

}  // namespace opgen::kernels
