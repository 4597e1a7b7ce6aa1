// str.replace, overload str: Python's s.replace(old, new, count): non-overlapping occurrences left to
// right, at most count when count >= 0; an empty old matches before each code point and at the end.
use opgen::Result;

pub fn str_replace__str(s: &str, old: &str, new_: &str, count: i64) -> Result<String> {
    let mut left = if count < 0 { i64::MAX } else { count };
    let mut r = String::with_capacity(s.len());
    if old.is_empty() {
        for c in s.chars() {
            if left > 0 {
                r.push_str(new_);
                left -= 1;
            }
            r.push(c);
        }
        if left > 0 {
            r.push_str(new_);
        }
        return Ok(r);
    }
    let mut rest = s;
    while left > 0 {
        match rest.find(old) {
            Some(at) => {
                r.push_str(&rest[..at]);
                r.push_str(new_);
                rest = &rest[at + old.len()..];
                left -= 1;
            }
            None => break,
        }
    }
    r.push_str(rest);
    Ok(r)
}
