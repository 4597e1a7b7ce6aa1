// math.cos, overload float: Python's math.cos on a float (radians). C's cos, whose argument
// reduction is exact for every finite x (cos(-0.0) is 1.0, cos(nan) is nan); inf and -inf raise ValueError
// "math domain error", as CPython does, where C's cos gives nan.
#include "opgen_kernel.hpp"

#include <cmath>

namespace opgen::kernels {

double math_cos__float(double x) {
  if (std::isinf(x)) throw opgen::Error(opgen::ErrorKind::Value, "math domain error");
  return std::cos(x);
}

}  // namespace opgen::kernels
