// operator.neg, overload int: Python's `-a` on ints, exact in int64; -(-2**63) does not fit
// and raises OverflowError instead of wrapping.
use opgen::{Error, Result};

pub fn operator_neg__int(a: i64) -> Result<i64> {
    a.checked_neg().ok_or_else(|| Error::overflow("int negation overflows int64"))
}
