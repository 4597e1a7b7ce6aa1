// operator.neg, overload float: Python's `-a` on floats, a sign flip (-0.0 and 0.0 swap,
// infinities swap, nan stays nan); never 0.0 - a, which would give 0.0 for -(0.0).
#include "opgen_kernel.hpp"

namespace opgen::kernels {

double operator_neg__float(double a) { return -a; }

}  // namespace opgen::kernels
