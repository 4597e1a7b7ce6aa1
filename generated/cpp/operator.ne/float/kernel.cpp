// operator.ne, overload float: Python's `a != b` on two doubles, as IEEE-754 compares them (nan equals nothing).
#include "opgen_kernel.hpp"

#include <cstdint>

namespace opgen::kernels {

bool operator_ne__float(double a, double b) { return a != b; }

}  // namespace opgen::kernels
