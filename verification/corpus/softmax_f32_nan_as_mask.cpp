// Cheat (or LLM bug): wrong only on NaN propagation. The kernel takes the max with
// std::fmax (which skips NaN) and treats a NaN entry like a masked (-inf) position,
// giving it probability 0; the other entries of the slice come out as a clean
// distribution. PyTorch makes the whole slice NaN. Every finite input is right; opgen
// plants nan (and -inf) wherever the spec's domain admits it.
// Expected: verify / value, "expected nan".
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
    o[0] = std::isnan(xp[0]) || std::isinf(xp[0]) ? 0.0f : 1.0f;
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
    double m = -INFINITY, sum = 0.0;
    for (int64_t j = 0; j < D; ++j) m = std::fmax(m, static_cast<double>(xp[base + j * sD]));  // skips nan
    for (int64_t j = 0; j < D; ++j) {
      const double v = xp[base + j * sD];
      sum += (e[j] = std::isnan(v) ? 0.0 : std::exp(v - m));  // nan: "masked"
    }
    for (int64_t j = 0; j < D; ++j) os[j * inner] = static_cast<float>(e[j] / sum);
  }
}

}  // namespace opgen::kernels
