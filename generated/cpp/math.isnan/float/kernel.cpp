// math.isnan, overload float: Python's math.isnan on a float, true for a nan of either sign and any payload (by classification, as
// CPython's C library call does). No errors.
#include "opgen_kernel.hpp"

#include <cmath>

namespace opgen::kernels {

bool math_isnan__float(double x) { return std::isnan(x); }

}  // namespace opgen::kernels
