// math.exp, overload float: Python's math.exp on a float. C's exp (exp(inf) is inf, exp(-inf)
// is 0.0, exp(nan) is nan, underflow gives subnormals or 0.0 without error); a finite argument
// whose result overflows to infinity raises OverflowError "math range error", as CPython does.
#include "opgen_kernel.hpp"

#include <cmath>

namespace opgen::kernels {

double math_exp__float(double x) {
  const double r = std::exp(x);
  if (std::isinf(r) && std::isfinite(x)) throw opgen::Error(opgen::ErrorKind::Overflow, "math range error");
  return r;
}

}  // namespace opgen::kernels
