// operator.neg, overload int: Python's `-a` on ints, exact in int64; -(-2**63) does not fit
// and raises OverflowError instead of wrapping.
#include "opgen_kernel.hpp"

#include <cstdint>

namespace opgen::kernels {

int64_t operator_neg__int(int64_t a) {
  int64_t r;
  if (__builtin_sub_overflow(int64_t{0}, a, &r)) throw opgen::Error(opgen::ErrorKind::Overflow, "int negation overflows int64");
  return r;
}

}  // namespace opgen::kernels
