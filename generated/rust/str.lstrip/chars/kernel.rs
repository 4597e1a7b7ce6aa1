// str.lstrip, overload chars: Python's s.lstrip(chars), removing the code points that occur in chars.
use opgen::Result;

pub fn str_lstrip__chars(s: &str, chars: &str) -> Result<String> {
    let set: Vec<char> = chars.chars().collect();
    Ok(s.trim_start_matches(|c: char| set.contains(&c)).to_string())
}
