// math.sin, overload float: Python's math.sin on a float (radians). C's sin, whose argument
// reduction is exact for every finite x (sin(-0.0) is -0.0, sin(nan) is nan); inf and -inf raise ValueError
// "math domain error", as CPython does, where C's sin gives nan.
#include "opgen_kernel.hpp"

#include <cmath>

namespace opgen::kernels {

double math_sin__float(double x) {
  if (std::isinf(x)) throw opgen::Error(opgen::ErrorKind::Value, "math domain error");
  return std::sin(x);
}

}  // namespace opgen::kernels
