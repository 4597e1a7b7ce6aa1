// operator.mod, overload int: Python's `a % b` on ints, the remainder with the divisor's sign
// (-7 % 2 is 1, 7 % -2 is -1). It always fits in int64. b == 0 raises ZeroDivisionError;
// b == -1 gives 0 without dividing (`i64::MIN % -1` panics).
use opgen::{Error, Result};

pub fn operator_mod__int(a: i64, b: i64) -> Result<i64> {
    if b == 0 {
        return Err(Error::zero_division("integer division or modulo by zero"));
    }
    if b == -1 {
        return Ok(0);
    }
    let r = a % b;
    // |r| < |b| and opposite signs: r + b cannot overflow
    Ok(if r != 0 && ((r < 0) != (b < 0)) { r + b } else { r })
}
