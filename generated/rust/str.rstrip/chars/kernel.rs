// str.rstrip, overload chars: Python's s.rstrip(chars), removing the code points that occur in chars.
use opgen::Result;

pub fn str_rstrip__chars(s: &str, chars: &str) -> Result<String> {
    let set: Vec<char> = chars.chars().collect();
    Ok(s.trim_end_matches(|c: char| set.contains(&c)).to_string())
}
