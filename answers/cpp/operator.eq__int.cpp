// operator.eq, overload int: Python's `a == b` on two int64 values, exactly.
#include "opgen_kernel.hpp"

#include <cstdint>

namespace opgen::kernels {

bool operator_eq__int(int64_t a, int64_t b) { return a == b; }

}  // namespace opgen::kernels
