// operator.mul, overload str_repeat: Python's `s * n`; n <= 0 gives "". A result longer than
// Python could hold raises OverflowError ("repeated string is too long"), as CPython does.
use opgen::{Error, Result};

pub fn operator_mul__str_repeat(a: &str, n: i64) -> Result<String> {
    if n <= 0 || a.is_empty() {
        return Ok(String::new());
    }
    let total = (a.len() as u64).checked_mul(n as u64).filter(|&t| t <= i64::MAX as u64);
    match total {
        None => Err(Error::overflow("repeated string is too long")),
        Some(_) => Ok(a.repeat(n as usize)),
    }
}
