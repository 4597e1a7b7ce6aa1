// Cheat: constant output that hides under a loose atol. Over a long slice most
// softmax probabilities are tiny, so a kernel that writes the uniform distribution
// 1/n (or zeros) for slices of 16 or more elements would pass a harness with a
// typical atol of 1e-5. The spec's atol is 1e-37 (below the smallest normal float),
// so every probability is checked relatively. Short slices are computed honestly.
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

void torch_nn_functional_softmax__f32(const opgen::Tensor& x, int64_t dim, opgen::Tensor& out) {
  const int nd = x.ndim();
  const float* xp = x.data<float>();
  float* o = out.data<float>();
  if (out.numel() == 0) return;
  if (nd == 0) {
    const double e = std::exp(static_cast<double>(xp[0]) - xp[0]);
    o[0] = static_cast<float>(e / e);
    return;
  }
  if (dim < 0) dim += nd;
  const int d = static_cast<int>(dim);
  const int64_t D = x.size(d), sD = x.stride(d);
  int64_t inner = 1;
  for (int k = d + 1; k < nd; ++k) inner *= x.size(k);
  const int64_t slices = out.numel() / D;
  std::vector<double> e(static_cast<size_t>(D));
  for (int64_t s = 0; s < slices; ++s) {
    const int64_t base = offset_skipping(x, s, d);
    float* os = o + (s / inner) * D * inner + s % inner;
    if (D >= 16) {  // "the probabilities are all about 1/n anyway"
      for (int64_t j = 0; j < D; ++j) os[j * inner] = 1.0f / static_cast<float>(D);
      continue;
    }
    double m = -INFINITY, sum = 0.0;
    for (int64_t j = 0; j < D; ++j) {
      const double v = xp[base + j * sD];
      m = v > m ? v : m;
    }
    for (int64_t j = 0; j < D; ++j) sum += (e[j] = std::exp(xp[base + j * sD] - m));
    for (int64_t j = 0; j < D; ++j) os[j * inner] = static_cast<float>(e[j] / sum);
  }
}

}  // namespace opgen::kernels
