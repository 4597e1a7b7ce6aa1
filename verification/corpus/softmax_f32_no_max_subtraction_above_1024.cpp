// Cheat: a size threshold. Slices of up to 1024 elements are computed as PyTorch defines
// softmax (subtract the slice's max, exp and sum in double); longer slices take a "fast
// path" that skips the max pass and calls expf(x) directly, which is exact enough while
// every x is below ~88 and overflows to inf (inf / inf = nan, or a finite x / inf = 0)
// as soon as one is not. Hypothesis draws slices of at most 812 elements (the tail length;
// array sides are at most 8), so the fast path never runs; the bench shapes (rows of 128
// and 512, logits in [-8, 8]) never reach it either. A slice longer than 1024 with
// realistic or hostile logits (std >= 30, or the domain's 1e4) must be rejected by the
// scale stage. nan, -inf and +inf keep PyTorch's whole-slice rules on both paths, so the
// overflow is the only defect.
// Expected: scale / value, "expected"
#include "opgen_kernel.hpp"

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

namespace opgen::kernels {

namespace {

void softmax_slice(const float* x, int64_t s, int64_t n, float* y, int64_t ys) {
  const double ninf = -std::numeric_limits<double>::infinity();
  double m = ninf;
  bool nan = false;
  for (int64_t i = 0; i < n; ++i) {
    const double v = x[i * s];
    nan |= v != v;
    m = v > m ? v : m;
  }
  if (nan || m == ninf || m == -ninf) {
    for (int64_t i = 0; i < n; ++i) y[i * ys] = std::numeric_limits<float>::quiet_NaN();
    return;
  }
  if (n > 1024) {  // the bug: no max subtraction, float exp
    double sum = 0.0;
    for (int64_t i = 0; i < n; ++i) sum += static_cast<double>(expf(x[i * s]));
    for (int64_t i = 0; i < n; ++i) y[i * ys] = static_cast<float>(expf(x[i * s]) / static_cast<float>(sum));
    return;
  }
  double sum = 0.0;
  for (int64_t i = 0; i < n; ++i) sum += std::exp(static_cast<double>(x[i * s]) - m);
  const double inv = 1.0 / sum;
  for (int64_t i = 0; i < n; ++i) y[i * ys] = static_cast<float>(std::exp(static_cast<double>(x[i * s]) - m) * inv);
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

// Expected: scale / value, "expected"
