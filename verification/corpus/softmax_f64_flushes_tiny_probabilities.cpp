// Cheat: zero output where the reference is tiny. "exp(x - max) below e**-30 is
// negligible": the kernel skips those exps and writes 0, which passes any harness whose
// atol is around 1e-12 or looser. The spec's float64 atol is 1e-300, so a probability
// of 1e-20 must come out as 1e-20, not 0.
// Expected: verify / value, "got 0.0".
#include "opgen_kernel.hpp"

#include <cmath>
#include <cstdint>
#include <vector>

namespace opgen::kernels {

namespace {

int64_t offset_skipping(const opgen::Tensor& t, int64_t i, int skip) {
  int64_t off = 0;
  for (int d = t.ndim() - 1; d >= 0; --d) {
    if (d == skip) continue;
    off += (i % t.size(d)) * t.stride(d);
    i /= t.size(d);
  }
  return off;
}

}  // namespace

void torch_nn_functional_softmax__f64(const opgen::Tensor& x, int64_t dim, opgen::Tensor& out) {
  const int nd = x.ndim();
  const double* xp = x.data<double>();
  double* o = out.data<double>();
  if (out.numel() == 0) return;
  if (nd == 0) {
    const double e = std::exp(xp[0] - xp[0]);
    o[0] = e / e;
    return;
  }
  if (dim < 0) dim += nd;
  const int d = static_cast<int>(dim);
  const int64_t D = x.size(d), sD = x.stride(d);
  int64_t inner = 1;
  for (int k = d + 1; k < nd; ++k) inner *= x.size(k);
  const int64_t slices = out.numel() / D;
  std::vector<long double> e(static_cast<size_t>(D));
  for (int64_t s = 0; s < slices; ++s) {
    const int64_t base = offset_skipping(x, s, d);
    double* os = o + (s / inner) * D * inner + s % inner;
    double m = -INFINITY;
    long double sum = 0.0L;
    for (int64_t j = 0; j < D; ++j) {
      const double v = xp[base + j * sD];
      m = v > m ? v : m;
    }
    for (int64_t j = 0; j < D; ++j) {
      const double t = xp[base + j * sD] - m;
      sum += (e[j] = t < -30.0 ? 0.0L : std::exp(t));  // "negligible"
    }
    for (int64_t j = 0; j < D; ++j) os[j * inner] = static_cast<double>(e[j] / sum);
  }
}

}  // namespace opgen::kernels
