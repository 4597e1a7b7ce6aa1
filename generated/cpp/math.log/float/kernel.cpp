// math.log, overload float: Python's one-argument math.log on a float. C's log for x > 0
// (log(inf) is inf, log(nan) is nan); 0.0, -0.0, a negative x and -inf raise ValueError
// "math domain error", as CPython does, where C's log gives -inf or nan.
#include "opgen_kernel.hpp"

#include <cmath>

namespace opgen::kernels {

double math_log__float(double x) {
  if (x <= 0.0) throw opgen::Error(opgen::ErrorKind::Value, "math domain error");  // nan compares false
  return std::log(x);
}

}  // namespace opgen::kernels
