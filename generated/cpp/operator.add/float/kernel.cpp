// operator.add, overload float: Python's `a + b` on floats, one IEEE-754 double addition.
#include "opgen_kernel.hpp"

namespace opgen::kernels {

double operator_add__float(double a, double b) { return a + b; }

}  // namespace opgen::kernels
