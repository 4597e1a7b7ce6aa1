// math.ceil, overload float: Python's math.ceil on a float, returned as an int. nan raises
// ValueError and +-inf OverflowError in Python's words; a ceil outside int64 (>= 2**63 or
// < -2**63), which Python would return as a big int, raises OverflowError. -2**63 itself fits.
#include "opgen_kernel.hpp"

#include <cmath>
#include <cstdint>

namespace opgen::kernels {

int64_t math_ceil__float(double x) {
  if (std::isnan(x)) throw opgen::Error(opgen::ErrorKind::Value, "cannot convert float NaN to integer");
  if (std::isinf(x)) throw opgen::Error(opgen::ErrorKind::Overflow, "cannot convert float infinity to integer");
  const double r = std::ceil(x);
  // [-2**63, 2**63): both bounds are doubles exactly, so the comparison is exact.
  if (!(r >= -9223372036854775808.0 && r < 9223372036854775808.0))
    throw opgen::Error(opgen::ErrorKind::Overflow, "math.ceil() of this float does not fit in int64");
  return static_cast<int64_t>(r);
}

}  // namespace opgen::kernels
