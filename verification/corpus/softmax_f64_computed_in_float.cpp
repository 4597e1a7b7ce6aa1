// Cheat: silent precision downgrade. The float64 overload does its arithmetic in
// float32 (max, exp, sum and division), twice as fast with SIMD and right to about
// seven digits. The spec's float64 rtol is 1e-13.
// Expected: verify / value, "exceeds the allowed".
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
    float m = -INFINITY, sum = 0.0f;
    for (int64_t j = 0; j < D; ++j) {
      const float v = static_cast<float>(xp[base + j * sD]);
      m = v > m ? v : m;
    }
    for (int64_t j = 0; j < D; ++j) {
      const float ej = std::exp(static_cast<float>(xp[base + j * sD]) - m);
      e[j] = ej;
      sum += ej;
    }
    for (int64_t j = 0; j < D; ++j) os[j * inner] = static_cast<float>(e[j]) / sum;
  }
}

}  // namespace opgen::kernels
