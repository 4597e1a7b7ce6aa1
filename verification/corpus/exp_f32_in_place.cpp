// Cheat: inputs modified. "x is a temporary anyway": the kernel computes exp in place
// in x's memory (casting away const, saving a buffer) and then copies the result to
// out. The caller's x is destroyed. opgen snapshots every input before the call and
// compares it afterwards.
// Expected: verify / input_modified, "wrote into its input".
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
  float* xw = const_cast<float*>(xp);  // "x is a temporary anyway"
  for (int64_t i = 0; i < n; ++i) {
    float& v = xw[offset_of(x, i)];
    v = static_cast<float>(std::exp(static_cast<double>(v)));
    o[i] = v;
  }
}

}  // namespace opgen::kernels
