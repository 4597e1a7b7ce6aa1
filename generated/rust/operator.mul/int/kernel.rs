// operator.mul, overload int: Python's `a * b` on ints, exact in int64; a product outside
// int64 (including -2**63 * -1) raises OverflowError instead of wrapping.
use opgen::{Error, Result};

pub fn operator_mul__int(a: i64, b: i64) -> Result<i64> {
    a.checked_mul(b).ok_or_else(|| Error::overflow("int multiplication overflows int64"))
}
