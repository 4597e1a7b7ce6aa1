// operator.mul, overload int: Python's `a * b` on ints, exact in int64.
// A product outside [-2**63, 2**63-1] (e.g. -2**63 * -1) raises OverflowError.
#include "opgen_kernel.hpp"

#include <cstdint>

namespace opgen::kernels {

int64_t operator_mul__int(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) throw opgen::Error(opgen::ErrorKind::Overflow, "int multiplication overflows int64");
  return r;
}

}  // namespace opgen::kernels
