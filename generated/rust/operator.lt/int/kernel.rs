// operator.lt, overload int: Python's `a < b` on two int64 values (less than), exact.
use opgen::Result;

pub fn operator_lt__int(a: i64, b: i64) -> Result<bool> {
    Ok(a < b)
}
