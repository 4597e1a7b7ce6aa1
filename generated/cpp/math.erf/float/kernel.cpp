// math.erf, overload float: Python's math.erf on a float, C's erf, which CPython calls (odd:
// erf(-0.0) is -0.0; erf(+-inf) is +-1.0, erf(nan) is nan; tiny x give 2/sqrt(pi) x, no flush
// to zero). No errors.
#include "opgen_kernel.hpp"

#include <cmath>

namespace opgen::kernels {

double math_erf__float(double x) { return std::erf(x); }

}  // namespace opgen::kernels
