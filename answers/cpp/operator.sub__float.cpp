// operator.sub, overload float: Python's `a - b` on floats, one IEEE-754 double subtraction
// (inf - inf is nan, -0.0 - 0.0 is -0.0, overflow gives inf; no error).
#include "opgen_kernel.hpp"

namespace opgen::kernels {

double operator_sub__float(double a, double b) { return a - b; }

}  // namespace opgen::kernels
