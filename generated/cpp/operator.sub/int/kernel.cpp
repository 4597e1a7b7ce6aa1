// operator.sub, overload int: Python's `a - b` on ints, exact in int64.
// Python ints are unbounded; a difference outside [-2**63, 2**63-1] raises OverflowError.
#include "opgen_kernel.hpp"

#include <cstdint>

namespace opgen::kernels {

int64_t operator_sub__int(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_sub_overflow(a, b, &r)) throw opgen::Error(opgen::ErrorKind::Overflow, "int subtraction overflows int64");
  return r;
}

}  // namespace opgen::kernels
