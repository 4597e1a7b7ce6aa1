// Honest: torch.nn.functional.layer_norm f32 with Welford's single-pass mean and variance in
// double (mean += delta / n, M2 += delta * (x - mean)): numerically stable, so rows of small
// spread around a large mean keep their digits, unlike E[x^2] - E[x]^2. The output is formed
// in double and rounded once. An inf in a row makes M2 nan (inf * (inf - inf)) and a nan
// propagates, so such rows are all nan, as in PyTorch; a row of one element gives bias.
// Must be admitted by every stage, the scale stage's offset rows included.
#include "opgen_kernel.hpp"

#include <cmath>
#include <cstdint>

namespace opgen::kernels {

void torch_nn_functional_layer_norm__f32(const opgen::Tensor& input, const opgen::Tensor& weight,
                                         const opgen::Tensor& bias, double eps, opgen::Tensor& out) {
  const int nd = input.ndim();
  const int64_t d = input.size(nd - 1), sx = input.stride(nd - 1);
  const int64_t sw = weight.stride(weight.ndim() - 1), sb = bias.stride(bias.ndim() - 1);
  const float* W = weight.data<float>();
  const float* B = bias.data<float>();
  const float* X = input.data<float>();
  float* Y = out.data<float>();
  if (out.numel() == 0 || d == 0) return;
  const int64_t rows = out.numel() / d;
  int64_t idx[OPGEN_MAX_DIMS] = {};
  for (int64_t r = 0; r < rows; ++r) {
    int64_t off = 0;
    for (int k = 0; k < nd - 1; ++k) off += idx[k] * input.stride(k);
    const float* x = X + off;
    double mean = 0.0, m2 = 0.0;  // Welford: one pass, in double
    for (int64_t j = 0; j < d; ++j) {
      const double v = x[j * sx];
      const double delta = v - mean;
      mean += delta / static_cast<double>(j + 1);
      m2 += delta * (v - mean);
    }
    const double var = m2 / static_cast<double>(d);
    const double rstd = 1.0 / std::sqrt(var + eps);
    float* y = Y + r * d;
    for (int64_t j = 0; j < d; ++j)
      y[j] = static_cast<float>((static_cast<double>(x[j * sx]) - mean) * rstd * W[j * sw] + B[j * sb]);
    for (int k = nd - 2; k >= 0; --k) {
      if (++idx[k] < input.size(k)) break;
      idx[k] = 0;
    }
  }
}

}  // namespace opgen::kernels

