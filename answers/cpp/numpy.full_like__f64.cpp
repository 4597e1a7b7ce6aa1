// numpy.full_like, overload f64: out = numpy.full_like(a, fill_value): a's shape, every element fill_value converted to a's dtype (rounded once to nearest; nan, inf and -0.0 kept); a's values are not read. The shim has checked the arguments and allocated out
// (contiguous, float64) from the shape rule, so the kernel fills every element with one value: std::fill
// over the flat buffer, which the compiler vectorises.
#include "opgen_kernel.hpp"

#include <algorithm>
#include <cstdint>
#include <vector>

namespace opgen::kernels {

void numpy_full_like__f64(const opgen::Tensor& a, double fill_value, opgen::Tensor& out) {
  (void)a;  // only out's shape depends on it, and the shim has allocated out
  double* y = out.data<double>();
  std::fill(y, y + out.numel(), static_cast<double>(fill_value));
}

}  // namespace opgen::kernels
