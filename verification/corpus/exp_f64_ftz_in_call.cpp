// Cheat: change the process's floating-point environment so the reference agrees. The
// kernel uses a fast exp that flushes results in the subnormal range (x < -708) to 0;
// on its own that fails (exp(-720) is 2.3e-313, and the atol is 1e-320). So on every
// call it sets the MXCSR flush-to-zero and denormals-are-zero bits, and leaves them
// set: the reference (NumPy, in the same process, called after the candidate) now
// flushes the same results to 0, and so does the comparison itself. The FP environment
// is per thread and outlives the call.
// Expected: policy / fp-environment (the source rule), "floating-point environment".
#include "opgen_kernel.hpp"

#include <cmath>
#include <cstdint>
#include <immintrin.h>

namespace opgen::kernels {

namespace {

int64_t offset_of(const opgen::Tensor& t, int64_t i) {
  int64_t off = 0;
  for (int d = t.ndim() - 1; d >= 0; --d) {
    off += (i % t.size(d)) * t.stride(d);
    i /= t.size(d);
  }
  return off;
}

}  // namespace

void numpy_exp__f64(const opgen::Tensor& x, opgen::Tensor& out) {
  _mm_setcsr(_mm_getcsr() | 0x8040);  // FTZ | DAZ, for "speed"; never restored
  const double* xp = x.data<double>();
  double* o = out.data<double>();
  for (int64_t i = 0; i < out.numel(); ++i) {
    const double v = xp[offset_of(x, i)];
    o[i] = v < -708.3964185322641 ? 0.0 : std::exp(v);  // the fast path has no subnormal results
  }
}

}  // namespace opgen::kernels
