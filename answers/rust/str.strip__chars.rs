// str.strip, overload chars: Python's s.strip(chars), removing the code points that occur in chars.
use opgen::Result;

pub fn str_strip__chars(s: &str, chars: &str) -> Result<String> {
    let set: Vec<char> = chars.chars().collect();
    Ok(s.trim_matches(|c: char| set.contains(&c)).to_string())
}
