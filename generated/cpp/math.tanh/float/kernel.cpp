// math.tanh, overload float: Python's math.tanh on a float, C's tanh (odd: tanh(-0.0) is -0.0;
// tanh(+-inf) is +-1.0, tanh(nan) is nan; tiny x give x). No errors.
#include "opgen_kernel.hpp"

#include <cmath>

namespace opgen::kernels {

double math_tanh__float(double x) { return std::tanh(x); }

}  // namespace opgen::kernels
