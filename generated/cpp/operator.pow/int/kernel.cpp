// operator.pow, overload int: Python's `a ** b` on ints, exact in int64.
// A negative exponent (a float result in Python) is a ValueError for this int-returning
// overload; a power outside int64 raises OverflowError. 0 ** 0 == 1.
#include "opgen_kernel.hpp"

#include <cstdint>

namespace opgen::kernels {

int64_t operator_pow__int(int64_t a, int64_t b) {
  if (b < 0) throw opgen::Error(opgen::ErrorKind::Value, "negative exponent in the int overload of pow");
  if (b == 0) return 1;
  if (a == 0 || a == 1) return a;
  if (a == -1) return (b & 1) ? -1 : 1;
  // |a| >= 2 from here, so the result's magnitude grows with every remaining bit of b.
  int64_t result = 1, base = a;
  for (;;) {
    if (b & 1) {
      if (__builtin_mul_overflow(result, base, &result))
        throw opgen::Error(opgen::ErrorKind::Overflow, "int power overflows int64");
    }
    b >>= 1;
    if (b == 0) break;
    // A bit of b is still to come, so the result will include a factor base**2:
    // if base**2 does not fit, neither does the result.
    if (__builtin_mul_overflow(base, base, &base))
      throw opgen::Error(opgen::ErrorKind::Overflow, "int power overflows int64");
  }
  return result;
}

}  // namespace opgen::kernels
