// LLM bug that looks like care: the overflow check runs after the signed addition,
// "if (a > 0 && b > 0 && r < 0)". Signed overflow is undefined behaviour, so the
// compiler may assume it never happens and drop the check; the sum wraps silently.
// Python's int never wraps: opgen's int strategy reaches both ends of int64 and the
// spec declares OverflowError, so a wrapped result is an undeclared wrong answer.
// Expected: verify / error, "expected OverflowError".
#include "opgen_kernel.hpp"

#include <cstdint>

namespace opgen::kernels {

int64_t operator_add__int(int64_t a, int64_t b) {
  const int64_t r = a + b;  // undefined on overflow
  if ((a > 0 && b > 0 && r < 0) || (a < 0 && b < 0 && r >= 0))
    throw opgen::Error(opgen::ErrorKind::Overflow, "int addition overflows int64");
  return r;
}

}  // namespace opgen::kernels
