// operator.eq, overload int: Python's `a == b` on two int64 values (equal), exact.
use opgen::Result;

pub fn operator_eq__int(a: i64, b: i64) -> Result<bool> {
    Ok(a == b)
}
