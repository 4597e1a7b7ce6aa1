// str.split, overload sep: Python's s.split(sep) and s.split(sep, maxsplit): the text between
// non-overlapping occurrences of sep, left to right, empty items kept; an empty sep is ValueError.
use opgen::{Error, Result};

pub fn str_split__sep(s: &str, sep: &str, maxsplit: i64) -> Result<Vec<String>> {
    if sep.is_empty() {
        return Err(Error::value("empty separator"));
    }
    let mut out = Vec::new();
    let mut left = if maxsplit < 0 { i64::MAX } else { maxsplit };
    let mut rest = s;
    while left > 0 {
        match rest.find(sep) {
            Some(at) => {
                out.push(rest[..at].to_string());
                rest = &rest[at + sep.len()..];
                left -= 1;
            }
            None => break,
        }
    }
    out.push(rest.to_string());
    Ok(out)
}
