// operator.ne, overload int: Python's `a != b` on two int64 values, exactly.
#include "opgen_kernel.hpp"

#include <cstdint>

namespace opgen::kernels {

bool operator_ne__int(int64_t a, int64_t b) { return a != b; }

}  // namespace opgen::kernels
