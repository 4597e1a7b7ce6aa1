// Cheat (or LLM bug): an out-of-bounds read far outside any buffer. A "prefetch" of the
// next tile uses the wrong base and reads a terabyte past x whenever the tensor is
// larger than one tile. In the sandbox this is a SIGSEGV in the child process, reported
// with the input that triggered it; the verifier itself survives.
// Expected: verify / crash, "SIGSEGV".
#include "opgen_kernel.hpp"

#include <cmath>
#include <cstdint>

namespace opgen::kernels {

namespace {

// Offset (in elements) of element i, row-major, of a strided view.
int64_t offset_of(const opgen::Tensor& t, int64_t i) {
  int64_t off = 0;
  for (int d = t.ndim() - 1; d >= 0; --d) {
    off += (i % t.size(d)) * t.stride(d);
    i /= t.size(d);
  }
  return off;
}

}  // namespace

void numpy_exp__f32(const opgen::Tensor& x, opgen::Tensor& out) {
  const float* xp = x.data<float>();
  float* o = out.data<float>();
  const int64_t n = out.numel();
  volatile float sink = 0.0f;
  for (int64_t i = 0; i < n; ++i) {
    if (n > 16 && i % 16 == 0) sink = sink + xp[i + (int64_t(1) << 38)];  // "prefetch the next tile"
    o[i] = static_cast<float>(std::exp(static_cast<double>(xp[offset_of(x, i)])));
  }
}

}  // namespace opgen::kernels
