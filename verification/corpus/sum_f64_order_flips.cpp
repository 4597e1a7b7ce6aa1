// Cheat: nondeterminism. A static counter flips the summation order (forward on even
// calls, backward on odd ones), as a reduction whose order depends on thread timing
// would. Both orders are within the spec's tolerance, so each result alone passes;
// two calls on equal inputs disagree in the last bits.
// (Since issue 12 the object audit refuses it before it runs: it keeps state between calls,
// which the run-time checks named above also caught.)
// Expected: policy / global-state, "owns writable data".
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

namespace {
int64_t calls = 0;
}  // namespace

void numpy_sum__f64(const opgen::Tensor& a, int64_t axis, opgen::Tensor& out) {
  const int nd = a.ndim();
  if (axis < 0) axis += nd;
  const int ax = static_cast<int>(axis);
  const double* x = a.data<double>();
  double* o = out.data<double>();
  const int64_t n = out.numel(), len = a.size(ax), step = a.stride(ax);
  const bool backward = (calls++ & 1) != 0;
  for (int64_t i = 0; i < n; ++i) {
    const double* s = x + offset_skipping(a, i, ax);
    double acc = 0.0;
    if (backward) {
      for (int64_t j = len - 1; j >= 0; --j) acc += s[j * step];
    } else {
      for (int64_t j = 0; j < len; ++j) acc += s[j * step];
    }
    o[i] = acc;
  }
}

}  // namespace opgen::kernels
