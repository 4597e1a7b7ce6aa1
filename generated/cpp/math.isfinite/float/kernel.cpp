// math.isfinite, overload float: Python's math.isfinite on a float, false for nan, inf and -inf (by classification, as
// CPython's C library call does). No errors.
#include "opgen_kernel.hpp"

#include <cmath>

namespace opgen::kernels {

bool math_isfinite__float(double x) { return std::isfinite(x); }

}  // namespace opgen::kernels
