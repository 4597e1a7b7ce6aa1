// str.join, overload str: Python's sep.join(items).
use opgen::Result;

pub fn str_join__str(sep: &str, items: &[&str]) -> Result<String> {
    Ok(items.join(sep))
}
