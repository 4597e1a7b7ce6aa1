// operator.mod, overload int: Python's `a % b` on ints, the remainder with the divisor's sign
// (-7 % 2 is 1, 7 % -2 is -1). It always fits in int64. b == 0 raises ZeroDivisionError;
// b == -1 gives 0 without dividing (C's -2**63 % -1 traps).
#include "opgen_kernel.hpp"

#include <cstdint>

namespace opgen::kernels {

int64_t operator_mod__int(int64_t a, int64_t b) {
  if (b == 0) throw opgen::Error(opgen::ErrorKind::ZeroDivision, "integer division or modulo by zero");
  if (b == -1) return 0;
  const int64_t r = a % b;
  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;  // |r| < |b| and opposite signs: no overflow
}

}  // namespace opgen::kernels
