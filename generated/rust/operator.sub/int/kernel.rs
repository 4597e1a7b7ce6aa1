// operator.sub, overload int: Python's `a - b` on ints, exact in int64; a difference outside
// int64 raises OverflowError instead of wrapping.
use opgen::{Error, Result};

pub fn operator_sub__int(a: i64, b: i64) -> Result<i64> {
    a.checked_sub(b).ok_or_else(|| Error::overflow("int subtraction overflows int64"))
}
