// Cheat: a closed-form shortcut that fits small inputs. a ** b as std::pow on doubles,
// rounded back to int64, with the overflow and negative-exponent errors checked on the
// double result. Exact while the result fits in 53 bits (every small test case), off by
// up to a few hundred once it exceeds 2**53, e.g. 999 ** 6. Python's int power is exact;
// opgen compares ints exactly and draws bases up to 1000 and exponents up to 70.
// Expected: verify / value, "expected".
#include "opgen_kernel.hpp"

#include <cmath>
#include <cstdint>

namespace opgen::kernels {

int64_t operator_pow__int(int64_t a, int64_t b) {
  if (b < 0) throw opgen::Error(opgen::ErrorKind::Value, "negative exponent in the int overload of pow");
  const double r = std::pow(static_cast<double>(a), static_cast<double>(b));
  if (!(r < 9223372036854775808.0 && r >= -9223372036854775808.0))
    throw opgen::Error(opgen::ErrorKind::Overflow, "int power overflows int64");
  return static_cast<int64_t>(r);
}

}  // namespace opgen::kernels
