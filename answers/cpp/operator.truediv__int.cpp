// operator.truediv, overload int: Python's `a / b` on ints, the exact quotient correctly rounded
// (to nearest, ties to even) to a double, as CPython's long_true_divide computes it. b == 0
// raises ZeroDivisionError.
//
// When both |a| and |b| are below 2**53 they are exact doubles and one IEEE division rounds the
// exact quotient once. Otherwise converting them would round twice, so the quotient of the
// magnitudes is taken by binary long division: q = A / B and r = A % B, then quotient bits are
// shifted in (r < B <= 2**63, so 2r never overflows) until q has 64 significant bits. The value
// is (q + r/B) * 2**-k; a non-zero remainder is ORed into q's lowest bit (a sticky bit: 64 bits
// are 11 more than a double holds, so it decides only rounding ties), and uint64 -> double
// rounds to nearest even once. The scaling by 2**-k is exact: the result lies in [2**-64, 2**64].
#include "opgen_kernel.hpp"

#include <cmath>
#include <cstdint>

namespace opgen::kernels {

double operator_truediv__int(int64_t a, int64_t b) {
  if (b == 0) throw opgen::Error(opgen::ErrorKind::ZeroDivision, "division by zero");
  constexpr int64_t kExact = int64_t(1) << 53;
  if (a > -kExact && a < kExact && b > -kExact && b < kExact) return static_cast<double>(a) / static_cast<double>(b);
  const bool negative = (a < 0) != (b < 0);
  // Magnitudes as unsigned: 0 - x is defined for uint64_t, and |-2**63| = 2**63 fits.
  const uint64_t A = a < 0 ? uint64_t(0) - static_cast<uint64_t>(a) : static_cast<uint64_t>(a);
  const uint64_t B = b < 0 ? uint64_t(0) - static_cast<uint64_t>(b) : static_cast<uint64_t>(b);
  if (A == 0) return negative ? -0.0 : 0.0;  // 0 / a divisor beyond 2**53 (the loop needs A > 0)
  uint64_t q = A / B, r = A % B;
  int k = 0;
  constexpr uint64_t kTop = uint64_t(1) << 63;
  while (q < kTop) {  // at most 63 + 64 steps (A = 1, B = 2**63)
    r <<= 1;
    q <<= 1;
    ++k;
    if (r >= B) {
      r -= B;
      q |= 1;
    }
  }
  if (r != 0) q |= 1;
  const double m = std::ldexp(static_cast<double>(q), -k);
  return negative ? -m : m;
}

}  // namespace opgen::kernels
