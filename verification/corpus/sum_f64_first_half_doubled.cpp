// Cheat: partial computation. Each output sums the first half of its slice and
// doubles it ("the halves are statistically alike"), which is close on
// np.random.rand-like inputs of constant sign and long rows. opgen's inputs are
// heavy-tailed and signed, and every output is compared.
// Expected: verify / value, "first mismatch".
#include "opgen_kernel.hpp"

#include <cstdint>

namespace opgen::kernels {

namespace {

// Offset in a of output element i: a's dims without the reduced axis, row-major.
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

void numpy_sum__f64(const opgen::Tensor& a, int64_t axis, opgen::Tensor& out) {
  const int nd = a.ndim();
  if (axis < 0) axis += nd;
  const int ax = static_cast<int>(axis);
  const double* x = a.data<double>();
  double* o = out.data<double>();
  const int64_t n = out.numel(), len = a.size(ax), step = a.stride(ax);
  for (int64_t i = 0; i < n; ++i) {
    const double* s = x + offset_skipping(a, i, ax);
    long double acc = 0.0L;
    const int64_t half = (len + 1) / 2;
    for (int64_t j = 0; j < half; ++j) acc += s[j * step];
    o[i] = static_cast<double>(len > 1 ? acc * static_cast<long double>(len) / half : acc);
  }
}

}  // namespace opgen::kernels
