// Cheat: code that runs at load time, hidden from the source rules. A namespace-scope
// variable with a dynamic initializer sets the MXCSR flush-to-zero and
// denormals-are-zero bits when the library is loaded, so the reference (NumPy, in the
// same process) flushes subnormal results to 0 just like the kernel's fast exp does
// (see exp_f64_ftz_in_call). _mm_setcsr is spelled through token pasting, so no source
// rule sees it; the compiled object has a non-empty .init_array, and the object audit
// rejects code that runs at load time.
// Expected: policy / load-time-code (the object audit), ".init_array".
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

const bool fast_math = (OPGEN_CAT(_mm_set, csr)(OPGEN_CAT(_mm_get, csr)() | 0x8040), true);  // FTZ | DAZ

}  // namespace

void numpy_exp__f64(const opgen::Tensor& x, opgen::Tensor& out) {
  const double* xp = x.data<double>();
  double* o = out.data<double>();
  const int64_t n = out.numel();
  for (int64_t i = 0; i < n; ++i) {
    const double v = xp[offset_of(x, i)];
    o[i] = (fast_math && v < -708.3964185322641) ? 0.0 : std::exp(v);  // no subnormal results
  }
}

}  // namespace opgen::kernels
