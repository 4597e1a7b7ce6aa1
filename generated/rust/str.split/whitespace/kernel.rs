// str.split, overload whitespace: Python's s.split() and s.split(None, maxsplit), CPython's
// algorithm over code points: runs of str.isspace() whitespace separate the words; once maxsplit
// splits are made, the rest with its leading whitespace skipped is the last word.
use opgen::Result;

// Python's str.isspace() on one code point (Rust's char::is_whitespace leaves out U+001C-U+001F).
fn is_space(c: char) -> bool {
    matches!(c, '\u{09}'..='\u{0D}' | '\u{1C}'..='\u{20}' | '\u{85}' | '\u{A0}' | '\u{1680}'
        | '\u{2000}'..='\u{200A}' | '\u{2028}' | '\u{2029}' | '\u{202F}' | '\u{205F}' | '\u{3000}')
}

pub fn str_split__whitespace(s: &str, maxsplit: i64) -> Result<Vec<String>> {
    let mut out = Vec::new();
    let mut left = if maxsplit < 0 { i64::MAX } else { maxsplit };
    let mut rest = s;
    while left > 0 {
        left -= 1;
        rest = rest.trim_start_matches(is_space);
        if rest.is_empty() {
            break;
        }
        let end = rest.find(is_space).unwrap_or(rest.len());
        out.push(rest[..end].to_string());
        rest = &rest[end..];
    }
    let rest = rest.trim_start_matches(is_space);
    if !rest.is_empty() {
        out.push(rest.to_string());
    }
    Ok(out)
}
