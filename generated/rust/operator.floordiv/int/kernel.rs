// operator.floordiv, overload int: Python's `a // b` on ints, the floor of the exact quotient
// (rounded toward negative infinity: -7 // 2 is -4). b == 0 raises ZeroDivisionError;
// -2**63 // -1 is 2**63, outside int64, and raises OverflowError (`/` would panic there).
use opgen::{Error, Result};

pub fn operator_floordiv__int(a: i64, b: i64) -> Result<i64> {
    if b == 0 {
        return Err(Error::zero_division("integer division or modulo by zero"));
    }
    if b == -1 && a == i64::MIN {
        return Err(Error::overflow("int floor division overflows int64"));
    }
    let (q, r) = (a / b, a % b); // truncating; cannot overflow now
    Ok(if r != 0 && ((r < 0) != (b < 0)) { q - 1 } else { q })
}
