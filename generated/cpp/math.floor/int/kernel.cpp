// math.floor, overload int: Python's math.floor on an int is the int itself (int.__floor__), exact over
// all of int64; never through a double, which would round ints above 2**53.
#include "opgen_kernel.hpp"

#include <cstdint>

namespace opgen::kernels {

int64_t math_floor__int(int64_t x) { return x; }

}  // namespace opgen::kernels
