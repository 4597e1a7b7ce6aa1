// operator.floordiv, overload float: Python's `a // b` on floats. A zero divisor (0.0 or -0.0)
// raises ZeroDivisionError whatever a is (nan and inf included). Otherwise CPython's
// float_floor_div: mod = fmod(a, b) (exact); div = (a - mod) / b; div -= 1 when mod is non-zero
// and its sign differs from b's; then floor(div), snapped up when div - floor(div) > 0.5, or
// copysign(0.0, a / b) when div is zero. So 5.0 // inf is 0.0, -5.0 // inf is -1.0,
// inf // 2.0 is nan, -0.0 // 3.0 is -0.0; a quotient beyond the double range is inf, no error.
#include "opgen_kernel.hpp"

#include <cmath>

namespace opgen::kernels {

double operator_floordiv__float(double a, double b) {
  if (b == 0.0) throw opgen::Error(opgen::ErrorKind::ZeroDivision, "float floor division by zero");
  const double mod = std::fmod(a, b);
  double div = (a - mod) / b;
  if (mod != 0.0 && ((b < 0.0) != (mod < 0.0))) div -= 1.0;
  if (div != 0.0) {  // nan counts as non-zero, as in C's `if (div)`
    double fl = std::floor(div);
    if (div - fl > 0.5) fl += 1.0;
    return fl;
  }
  return std::copysign(0.0, a / b);
}

}  // namespace opgen::kernels
