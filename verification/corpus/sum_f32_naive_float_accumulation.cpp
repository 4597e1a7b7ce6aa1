// Cheat: a precision downgrade that only long, realistic reductions show. Each output is
// one float32 accumulator added to in order (the naive loop: no pairwise blocks, no
// double), so its error grows with the partial sum: once the running total is large
// against the addends, every add rounds the same way and the sum stagnates. Hypothesis
// draws axes of at most 812 elements, where the spec's bound (1e-4 * sum|a|, meant to
// admit "any reasonable order" at that length) holds with two orders of magnitude to
// spare. Computed for this entry (NumPy simulation of the same loop, error / sum|a|):
//   n = 100003: N(0,1) 2e-8, uniform(0,1) 4e-6, 1000.37 + N(0,1) 1.9e-4, 4306.99 + N(0,1)
//               8.6e-4, but 1000 + N(0,1) only 6.6e-7 (1000 is a multiple of the partial
//               sum's ulp, so the roundings do not all go one way)
//   n = 1M:     any offset of 1000..4300 with std 1: 7e-3 .. 9e-3; uniform(0,1) 2.2e-5
// So only offset rows (mean >> spread, the mean not a multiple of the partial sum's ulp)
// at 100k+ elements reject it: centred data of any length does not. The scale stage
// aims two cases at it on every seed (one long run, long offset rows), drawn without
// special values: a planted nan or inf made the sum nonfinite on both sides and let this
// entry through on 10 seeds in 200 (tests/test_scale.py pins every seed of 60).
// Expected: scale / value, "exceeds the allowed"
#include "opgen_kernel.hpp"

#include <cstdint>

namespace opgen::kernels {

void numpy_sum__f32(const opgen::Tensor& a, int64_t axis, opgen::Tensor& out) {
  const int nd = a.ndim();
  if (axis < -nd || axis >= nd) throw opgen::Error(opgen::ErrorKind::Value, "axis out of range");
  if (axis < 0) axis += nd;
  const int ax = static_cast<int>(axis);
  float* dst = out.data<float>();
  const int64_t n_out = out.numel();
  if (n_out == 0) return;
  const int64_t K = a.size(ax), sK = a.stride(ax);
  const float* src = a.data<float>();
  int64_t idx[OPGEN_MAX_DIMS] = {};
  for (int64_t o = 0; o < n_out; ++o) {  // outputs in row-major order of the kept dims
    int64_t off = 0;
    for (int d = 0; d < nd; ++d) off += idx[d] * a.stride(d);
    float acc = 0.0f;  // the bug: one float accumulator, added to in order
    for (int64_t i = 0; i < K; ++i) acc += src[off + i * sK];
    dst[o] = acc;
    for (int d = nd - 1; d >= 0; --d) {
      if (d == ax) continue;
      if (++idx[d] < a.size(d)) break;
      idx[d] = 0;
    }
  }
}

}  // namespace opgen::kernels

// Expected: scale / value, "exceeds the allowed"
