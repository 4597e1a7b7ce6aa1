// str.startswith, overload str: Python's s.startswith(prefix) with one str, compared as UTF-8 bytes.
use opgen::Result;

pub fn str_startswith__str(s: &str, prefix: &str) -> Result<bool> {
    Ok(s.starts_with(prefix))
}
