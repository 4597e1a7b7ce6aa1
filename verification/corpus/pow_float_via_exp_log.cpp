// Cheat: a closed-form shortcut that fits the usual test inputs. a ** b as
// exp(b * log(a)), with Python's special cases and errors copied faithfully. It agrees
// with pow() to a few ulp for moderate exponents (the np.random.rand()-style inputs a
// lazy test uses), but the error of log(a) is multiplied by b: for results near 1e300
// it is hundreds of ulp. The spec's rtol is 4.5e-16 (libm's pow is within 1 ulp) and
// opgen draws exponents up to 400.
// Expected: verify / value, "exceeds the allowed".
#include "opgen_kernel.hpp"

#include <cmath>

namespace opgen::kernels {

namespace {

bool is_odd_integer(double w) { return std::fmod(std::fabs(w), 2.0) == 1.0; }

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
      if (std::isinf(std::pow(-a, b))) throw opgen::Error(opgen::ErrorKind::Overflow, "complex exponentiation");
      throw opgen::Error(opgen::ErrorKind::Value, "negative number cannot be raised to a fractional power");
    }
    a = -a;
    negate = is_odd_integer(b);
  }
  if (a == 1.0) return negate ? -1.0 : 1.0;
  const double r = std::exp(b * std::log(a));  // the shortcut
  if (std::isinf(r)) throw opgen::Error(opgen::ErrorKind::Overflow, "(34, 'Numerical result out of range')");
  return negate ? -r : r;
}

}  // namespace opgen::kernels
