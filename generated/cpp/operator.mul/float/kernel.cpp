// operator.mul, overload float: Python's `a * b` on floats, one IEEE-754 double multiplication.
#include "opgen_kernel.hpp"

namespace opgen::kernels {

double operator_mul__float(double a, double b) { return a * b; }

}  // namespace opgen::kernels
