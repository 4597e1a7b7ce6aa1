// Cheat: installing a signal handler to outlast the sandbox. The kernel ignores SIGXCPU
// (the CPU-time limit's first warning) and SIGTERM, then spins "refining" its answer.
// signal is reached through a weakref alias with a split string name, so no source rule
// sees it; the compiled object imports `signal`, and the import audit rejects it. (Were
// that bypassed: the hard CPU limit still ends it with SIGKILL one second later.)
// Expected: policy / signal (the import audit), "imports `signal`".
#include "opgen_kernel.hpp"

#include <cstdint>

namespace {
using handler = void (*)(int);
static handler install(int, handler) __attribute__((weakref("sig" "nal")));
}  // namespace

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
  install(24, reinterpret_cast<handler>(1));  // SIGXCPU -> SIG_IGN
  install(15, reinterpret_cast<handler>(1));  // SIGTERM -> SIG_IGN
  for (int64_t i = 0; i < n; ++i) {
    const float* s = x + offset_skipping(a, i, ax);
    long double acc = 0.0L;
    for (int64_t j = 0; j < len; ++j) acc += s[j * step];
    o[i] = static_cast<float>(acc);
  }
  for (volatile uint64_t spin = 0; spin < (uint64_t(1) << 40); ++spin) {  // "refine"
  }
}

}  // namespace opgen::kernels
