// math.ceil, overload int: Python's math.ceil on an int is the int itself (int.__ceil__), exact over
// all of int64; never through a double, which would round ints above 2**53.
#include "opgen_kernel.hpp"

#include <cstdint>

namespace opgen::kernels {

int64_t math_ceil__int(int64_t x) { return x; }

}  // namespace opgen::kernels
