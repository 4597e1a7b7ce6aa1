// math.isinf, overload float: Python's math.isinf on a float, true for inf and -inf (by classification, as
// CPython's C library call does). No errors.
#include "opgen_kernel.hpp"

#include <cmath>

namespace opgen::kernels {

bool math_isinf__float(double x) { return std::isinf(x); }

}  // namespace opgen::kernels
