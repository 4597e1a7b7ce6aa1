// Cheat: a precision downgrade that only long, realistic rows show. Rows shorter than 64
// take a careful scalar path (two passes in double); rows of 64 or more take a "SIMD" path
// that takes mean and variance in one pass in float32 with eight partial sums,
// var = E[x^2] - E[x]^2 (the textbook formula, half the memory traffic of two passes);
// everything after that is done in double and rounded once. The formula cancels
// catastrophically when a row's mean is large against its spread: a row with mean 1000 and
// std 1 has E[x^2] = 1e6 + 1, whose float32 rounding error (~0.03 per add) is comparable to
// the variance itself, so rstd, and every output, is wrong in the first digits, or var
// comes out negative (clamped to 0: rstd = 1/sqrt(eps)). Hypothesis draws rows of at most
// 40 elements (the spec's max_side), so only the double path runs there. (The one-pass
// float formula on every row is caught today: a drawn two-element row [-73.3, -68.8]
// already cancels enough.) Transformer hidden states are offset rows (LayerNorm inputs
// with mean >> std in some tokens); the scale stage's offset rows at d = 384 / 768 must
// reject it. nan and inf still make the row nan on both paths.
// Expected: scale / value, "scale case"
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
    double mean, var;
    if (d < 64) {  // two passes in double
      double s = 0.0;
      for (int64_t j = 0; j < d; ++j) s += x[j * sx];
      mean = s / static_cast<double>(d);
      double q = 0.0;
      for (int64_t j = 0; j < d; ++j) q += (x[j * sx] - mean) * (x[j * sx] - mean);
      var = q / static_cast<double>(d);
    } else {  // the bug: one pass in float32, E[x^2] - E[x]^2
      float s[8] = {}, ss[8] = {};
      int64_t j = 0;
      for (; j + 8 <= d; j += 8)
        for (int l = 0; l < 8; ++l) {
          const float v = x[(j + l) * sx];
          s[l] += v;
          ss[l] += v * v;
        }
      for (; j < d; ++j) {
        const float v = x[j * sx];
        s[0] += v;
        ss[0] += v * v;
      }
      float st = 0.0f, sst = 0.0f;
      for (int l = 0; l < 8; ++l) {
        st += s[l];
        sst += ss[l];
      }
      const float m = st / static_cast<float>(d);
      float v = sst / static_cast<float>(d) - m * m;
      mean = m;
      var = v < 0.0f ? 0.0f : v;
    }
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

// Expected: scale / value, "exceeds the allowed"
