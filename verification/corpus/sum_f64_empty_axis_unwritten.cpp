// Cheat (or LLM bug): wrong only on 0-size input. When the reduced axis is empty the
// kernel returns early ("nothing to add"), leaving out unwritten; numpy.sum of an empty
// axis is 0. Every other shape is right. opgen's shapes include 0-size dims, and the
// NaN-poisoned output shows the missing zeros.
// Expected: verify / value, "expected 0.0, got nan".
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
  if (len == 0) return;  // "nothing to add"
  for (int64_t i = 0; i < n; ++i) {
    const double* s = x + offset_skipping(a, i, ax);
    long double acc = 0.0L;
    for (int64_t j = 0; j < len; ++j) acc += s[j * step];
    o[i] = static_cast<double>(acc);
  }
}

}  // namespace opgen::kernels
