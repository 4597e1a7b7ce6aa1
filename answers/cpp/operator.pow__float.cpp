// operator.pow, overload float: Python's `a ** b` on floats, with Python's errors.
//
// This follows CPython's float_pow case by case:
//   b == 0                       -> 1.0 (even for a nan)
//   a nan                        -> nan
//   b nan                        -> 1.0 if a == 1 else nan
//   b infinite                   -> 1.0 if |a| == 1; inf if (b > 0) == (|a| > 1); else 0.0
//                                   (so 0.0 ** -inf is inf, not an error, as in Python)
//   a infinite                   -> by sign of b and parity of b
//   a == +-0.0                   -> b < 0: ZeroDivisionError; else +-0.0 (sign kept for odd b)
//   a < 0, b not an integer      -> Python returns a complex number. The opgen reference
//                                   turns that into ValueError, except that CPython's
//                                   complex power itself raises OverflowError first when
//                                   |a| ** b overflows ("complex exponentiation").
//   a < 0, b an integer          -> -(|a| ** b) for odd b, |a| ** b for even b
//   |a| == 1                     -> +-1.0
//   otherwise pow(); an infinite result (finite a and b) raises OverflowError.
#include "opgen_kernel.hpp"

#include <cmath>

namespace opgen::kernels {

namespace {

bool is_odd_integer(double w) {
  // Mirrors CPython's DOUBLE_IS_ODD_INTEGER: fmod(fabs(w), 2.0) == 1.0.
  return std::fmod(std::fabs(w), 2.0) == 1.0;
}

}  // namespace

double operator_pow__float(double a, double b) {
  if (b == 0.0) return 1.0;
  if (std::isnan(a)) return a;
  if (std::isnan(b)) return a == 1.0 ? 1.0 : b;
  if (std::isinf(b)) {
    const double av = std::fabs(a);
    if (av == 1.0) return 1.0;
    if ((b > 0.0) == (av > 1.0)) return std::fabs(b);
    return 0.0;
  }
  if (std::isinf(a)) {
    const bool odd = is_odd_integer(b);
    if (b > 0.0) return odd ? a : std::fabs(a);
    return odd ? std::copysign(0.0, a) : 0.0;
  }
  if (a == 0.0) {
    if (b < 0.0) throw opgen::Error(opgen::ErrorKind::ZeroDivision, "0.0 cannot be raised to a negative power");
    return is_odd_integer(b) ? a : 0.0;
  }
  bool negate = false;
  if (a < 0.0) {
    if (b != std::floor(b)) {
      // CPython hands this to complex power: |a| ** b * (cos + i sin)(pi * b).
      // Its magnitude overflowing raises OverflowError; otherwise the result is complex.
      if (std::isinf(std::pow(-a, b)))
        throw opgen::Error(opgen::ErrorKind::Overflow, "complex exponentiation");
      throw opgen::Error(opgen::ErrorKind::Value, "negative number cannot be raised to a fractional power");
    }
    a = -a;
    negate = is_odd_integer(b);
  }
  if (a == 1.0) return negate ? -1.0 : 1.0;
  double r = std::pow(a, b);
  if (std::isinf(r)) throw opgen::Error(opgen::ErrorKind::Overflow, "(34, 'Numerical result out of range')");
  return negate ? -r : r;
}

}  // namespace opgen::kernels
