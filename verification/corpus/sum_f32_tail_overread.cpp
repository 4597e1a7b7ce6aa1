// Cheat (or LLM bug): a small out-of-bounds read that never shows in testing. Each
// slice is read in whole blocks of 8 elements, the last block included, and the lanes
// past the end of the slice are masked out of the sum; for the last slice of a
// contiguous tensor those lanes lie past the end of the buffer. The results are right
// and reading a few bytes of heap slack does not crash, so a plain run passes.
// AddressSanitizer's redzones catch the read.
// Expected: sanitizer / sanitizer, "heap-buffer-overflow".
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
    for (int64_t j = 0; j < len; j += 8) {
      float block[8];
      for (int k = 0; k < 8; ++k) block[k] = s[(j + k) * step];  // whole block, even past the end
      for (int k = 0; k < 8 && j + k < len; ++k) acc += block[k];
    }
    o[i] = static_cast<float>(acc);
  }
}

}  // namespace opgen::kernels
