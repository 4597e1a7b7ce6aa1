// operator.ge, overload str: Python's `a >= b` on two strings, lexicographic by code
// point. Rust orders str by its UTF-8 bytes, which keeps code point order; a proper prefix
// comes first.
use opgen::Result;

pub fn operator_ge__str(a: &str, b: &str) -> Result<bool> {
    Ok(a >= b)
}
