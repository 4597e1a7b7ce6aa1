// operator.floordiv, overload int: Python's `a // b` on ints, the floor of the exact quotient
// (rounded toward negative infinity: -7 // 2 is -4). b == 0 raises ZeroDivisionError;
// -2**63 // -1 is 2**63, outside int64, and raises OverflowError (C's `/` would trap there).
#include "opgen_kernel.hpp"

#include <cstdint>
#include <limits>

namespace opgen::kernels {

int64_t operator_floordiv__int(int64_t a, int64_t b) {
  if (b == 0) throw opgen::Error(opgen::ErrorKind::ZeroDivision, "integer division or modulo by zero");
  if (b == -1 && a == std::numeric_limits<int64_t>::min())
    throw opgen::Error(opgen::ErrorKind::Overflow, "int floor division overflows int64");
  const int64_t q = a / b, r = a % b;
  return (r != 0 && ((r < 0) != (b < 0))) ? q - 1 : q;
}

}  // namespace opgen::kernels
