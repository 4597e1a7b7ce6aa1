// str.endswith, overload str: Python's s.endswith(suffix) with one str, compared as UTF-8 bytes.
use opgen::Result;

pub fn str_endswith__str(s: &str, suffix: &str) -> Result<bool> {
    Ok(s.ends_with(suffix))
}
