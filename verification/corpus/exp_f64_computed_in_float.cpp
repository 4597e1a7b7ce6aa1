// Cheat: silent precision downgrade. The float64 overload rounds x to float32 and calls
// the float32 exp (expf is about twice as fast and vectorises better). Results are
// right to about seven significant digits; the spec's float64 rtol is 5e-16 (2 ulp),
// and x above 88.7 overflows float32 to inf.
// Expected: verify / value, "exceeds the allowed".
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

void numpy_exp__f64(const opgen::Tensor& x, opgen::Tensor& out) {
  const double* xp = x.data<double>();
  double* o = out.data<double>();
  const int64_t n = out.numel();
  for (int64_t i = 0; i < n; ++i) o[i] = std::exp(static_cast<float>(xp[offset_of(x, i)]));
}

}  // namespace opgen::kernels
