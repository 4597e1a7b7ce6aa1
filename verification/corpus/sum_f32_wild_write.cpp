// Cheat (or LLM bug): out-of-bounds write far outside any buffer. A "scratch slot"
// address computed from the wrong base lands a terabyte past out. Without a sandbox
// this kills the verifier itself; in opgen's child process it is a SIGSEGV that the
// parent reports as a clean rejection naming the signal and the input.
// Expected: verify / crash, "SIGSEGV".
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

void numpy_sum__f32(const opgen::Tensor& a, int64_t axis, opgen::Tensor& out) {
  const int nd = a.ndim();
  if (axis < 0) axis += nd;
  const int ax = static_cast<int>(axis);
  const float* x = a.data<float>();
  float* o = out.data<float>();
  const int64_t n = out.numel(), len = a.size(ax), step = a.stride(ax);
  for (int64_t i = 0; i < n; ++i) {
    const float* s = x + offset_skipping(a, i, ax);
    long double acc = 0.0L;
    for (int64_t j = 0; j < len; ++j) acc += s[j * step];
    o[i] = static_cast<float>(acc);
  }
  volatile float* scratch = o + (int64_t(1) << 38);  // "scratch slot"
  *scratch = 0.0f;
}

}  // namespace opgen::kernels
