// math.sqrt, overload float: Python's math.sqrt on a float. IEEE-754's correctly rounded square
// root (sqrt(-0.0) is -0.0, sqrt(inf) is inf, sqrt(nan) is nan); a negative argument, -inf
// included, raises ValueError "math domain error" as CPython does, where C's sqrt gives nan.
#include "opgen_kernel.hpp"

#include <cmath>

namespace opgen::kernels {

double math_sqrt__float(double x) {
  if (x < 0.0) throw opgen::Error(opgen::ErrorKind::Value, "math domain error");
  return std::sqrt(x);
}

}  // namespace opgen::kernels
