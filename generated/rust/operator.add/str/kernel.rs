// operator.add, overload str: concatenation of two UTF-8 strings (Python's `a + b`).
use opgen::Result;

pub fn operator_add__str(a: &str, b: &str) -> Result<String> {
    let mut s = String::with_capacity(a.len() + b.len());
    s.push_str(a);
    s.push_str(b);
    Ok(s)
}
