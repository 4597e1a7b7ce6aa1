// operator.truediv, overload int: Python's `a / b` on ints, the exact quotient correctly rounded
// (to nearest, ties to even) to a double, as CPython's long_true_divide computes it. b == 0
// raises ZeroDivisionError.
//
// When both |a| and |b| are below 2**53 they are exact doubles and one IEEE division rounds the
// exact quotient once. Otherwise converting them would round twice, so the quotient of the
// magnitudes is taken by binary long division: q = A / B and r = A % B, then quotient bits are
// shifted in (r < B <= 2**63, so 2r never overflows) until q has 64 significant bits. The value
// is (q + r/B) * 2**-k; a non-zero remainder is ORed into q's lowest bit (a sticky bit: 64 bits
// are 11 more than a double holds, so it decides only rounding ties), and `q as f64` rounds to
// nearest even once. The scaling by 2**-k is exact: the result lies in [2**-64, 2**64].
use opgen::{Error, Result};

pub fn operator_truediv__int(a: i64, b: i64) -> Result<f64> {
    if b == 0 {
        return Err(Error::zero_division("division by zero"));
    }
    const EXACT: i64 = 1 << 53;
    if a > -EXACT && a < EXACT && b > -EXACT && b < EXACT {
        return Ok(a as f64 / b as f64);
    }
    let negative = (a < 0) != (b < 0);
    let (big_a, big_b) = (a.unsigned_abs(), b.unsigned_abs());
    if big_a == 0 {
        // 0 / a divisor beyond 2**53 (the loop below needs A > 0)
        return Ok(if negative { -0.0 } else { 0.0 });
    }
    let (mut q, mut r) = (big_a / big_b, big_a % big_b);
    let mut k: i32 = 0;
    const TOP: u64 = 1 << 63;
    while q < TOP {
        // at most 63 + 64 steps (A = 1, B = 2**63)
        r <<= 1;
        q <<= 1;
        k += 1;
        if r >= big_b {
            r -= big_b;
            q |= 1;
        }
    }
    if r != 0 {
        q |= 1;
    }
    // 2**-k as a double, built from its bits (k <= 127: a normal number).
    let scale = f64::from_bits(((1023 - k) as u64) << 52);
    let m = q as f64 * scale;
    Ok(if negative { -m } else { m })
}
