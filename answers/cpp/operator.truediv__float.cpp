// operator.truediv, overload float: Python's `a / b` on floats. A zero divisor (0.0 or -0.0)
// raises ZeroDivisionError whatever a is (nan and inf included), as Python checks it first;
// otherwise one IEEE-754 double division (inf / inf is nan, overflow gives inf, no error).
#include "opgen_kernel.hpp"

namespace opgen::kernels {

double operator_truediv__float(double a, double b) {
  if (b == 0.0) throw opgen::Error(opgen::ErrorKind::ZeroDivision, "float division by zero");
  return a / b;
}

}  // namespace opgen::kernels
