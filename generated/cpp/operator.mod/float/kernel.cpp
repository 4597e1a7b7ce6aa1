// operator.mod, overload float: Python's `a % b` on floats. A zero divisor (0.0 or -0.0) raises
// ZeroDivisionError whatever a is (nan and inf included). Otherwise CPython's float_rem:
// mod = fmod(a, b) (exact); mod += b when mod is non-zero and its sign differs from b's; a zero
// mod becomes copysign(0.0, b). So -0.0 % 3.0 is 0.0, -5.0 % inf is inf, inf % 2.0 is nan.
#include "opgen_kernel.hpp"

#include <cmath>

namespace opgen::kernels {

double operator_mod__float(double a, double b) {
  if (b == 0.0) throw opgen::Error(opgen::ErrorKind::ZeroDivision, "float modulo by zero");
  double mod = std::fmod(a, b);
  if (mod != 0.0) {  // nan counts as non-zero
    if ((b < 0.0) != (mod < 0.0)) mod += b;
    return mod;
  }
  return std::copysign(0.0, b);
}

}  // namespace opgen::kernels
