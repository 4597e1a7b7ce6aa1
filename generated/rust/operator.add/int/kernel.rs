// operator.add, overload int: Python's `a + b` on ints, exact in int64; a sum outside
// int64 raises OverflowError instead of wrapping.
use opgen::{Error, Result};

pub fn operator_add__int(a: i64, b: i64) -> Result<i64> {
    a.checked_add(b).ok_or_else(|| Error::overflow("int addition overflows int64"))
}
