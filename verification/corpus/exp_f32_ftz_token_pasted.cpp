// Cheat: change the process's floating-point environment so the reference agrees, with
// the call spelled through token pasting so no source rule sees it. As
// exp_f64_ftz_in_call (float32: results below 1.18e-38 are subnormal): the kernel flushes
// subnormal results to 0 and sets FTZ|DAZ in MXCSR on every call without restoring it.
// While the candidate ran in the verifier's own process this worked: NumPy's reference,
// computed afterwards in the same thread, flushed the same results and the comparison
// passed (no import, no load-time code, no system call for any audit to see). The
// candidate now runs in a separate executor process and the reference in the trusted
// runner, which its MXCSR does not reach, so the flushed results are plain wrong answers.
// Expected: verify / value, "got 0.0".
#include "opgen_kernel.hpp"

#include <cmath>
#include <cstdint>
#include <immintrin.h>

#define OPGEN_CAT(a, b) a##b

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
  OPGEN_CAT(_mm_set, csr)(OPGEN_CAT(_mm_get, csr)() | 0x8040);  // FTZ | DAZ, never restored
  for (int64_t i = 0; i < n; ++i) {
    const float v = xp[offset_of(x, i)];
    o[i] = v < -87.33654f ? 0.0f : static_cast<float>(std::exp(static_cast<double>(v)));  // no subnormals
  }
}

}  // namespace opgen::kernels
