// operator.ne, overload str: Python's `a != b` on two strings, byte by byte (UTF-8, so code
// point by code point).
use opgen::Result;

pub fn operator_ne__str(a: &str, b: &str) -> Result<bool> {
    Ok(a != b)
}
