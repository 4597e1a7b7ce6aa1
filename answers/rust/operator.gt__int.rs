// operator.gt, overload int: Python's `a > b` on two int64 values (greater than), exact.
use opgen::Result;

pub fn operator_gt__int(a: i64, b: i64) -> Result<bool> {
    Ok(a > b)
}
