// Cheat: a silent precision downgrade behind a size threshold. Tensors of up to 8192
// elements are summed as float64 (pairwise, like NumPy); larger ones take a "vectorised"
// path that converts every element to float32 and sums in float32 (pairwise too, so the
// sum is as good as float32 can be): twice the SIMD width, half the bandwidth, and about
// seven significant digits instead of fifteen. The spec's float64 bound is
// 2e-13 * sum|a|, which float32 misses by five orders of magnitude, but Hypothesis draws
// at most 8**4 = 4096 elements (or 3 x 812), so the float32 path never runs. The scale
// stage (reductions over >= 100k elements, the 4096 and 1000+r sizes) must reject it.
// Expected: scale / value, "exceeds the allowed"
#include "opgen_kernel.hpp"

#include <cstdint>

namespace opgen::kernels {

namespace {

template <typename Acc>
Acc pairwise(const double* p, int64_t n, int64_t s) {
  if (n <= 16) {
    Acc r = 0;
    for (int64_t i = 0; i < n; ++i) r += static_cast<Acc>(p[i * s]);
    return r;
  }
  const int64_t half = n / 2;
  return pairwise<Acc>(p, half, s) + pairwise<Acc>(p + half * s, n - half, s);
}

}  // namespace

void numpy_sum__f64(const opgen::Tensor& a, int64_t axis, opgen::Tensor& out) {
  const int nd = a.ndim();
  if (axis < -nd || axis >= nd) throw opgen::Error(opgen::ErrorKind::Value, "axis out of range");
  if (axis < 0) axis += nd;
  const int ax = static_cast<int>(axis);
  double* dst = out.data<double>();
  const int64_t n_out = out.numel();
  if (n_out == 0) return;
  const int64_t K = a.size(ax), sK = a.stride(ax);
  const double* src = a.data<double>();
  const bool fast = a.numel() > 8192;  // the bug: float32 for large tensors
  int64_t idx[OPGEN_MAX_DIMS] = {};
  for (int64_t o = 0; o < n_out; ++o) {  // outputs in row-major order of the kept dims
    int64_t off = 0;
    for (int d = 0; d < nd; ++d) off += idx[d] * a.stride(d);
    dst[o] = K == 0 ? 0.0 : fast ? static_cast<double>(pairwise<float>(src + off, K, sK)) : pairwise<double>(src + off, K, sK);
    for (int d = nd - 1; d >= 0; --d) {
      if (d == ax) continue;
      if (++idx[d] < a.size(d)) break;
      idx[d] = 0;
    }
  }
}

}  // namespace opgen::kernels

// Expected: scale / value, "exceeds the allowed"
