// str.strip, overload whitespace: Python's s.strip(), removing str.isspace() whitespace code points.
use opgen::Result;

// Python's str.isspace() on one code point (Rust's char::is_whitespace leaves out U+001C-U+001F).
fn is_space(c: char) -> bool {
    matches!(c, '\u{09}'..='\u{0D}' | '\u{1C}'..='\u{20}' | '\u{85}' | '\u{A0}' | '\u{1680}'
        | '\u{2000}'..='\u{200A}' | '\u{2028}' | '\u{2029}' | '\u{202F}' | '\u{205F}' | '\u{3000}')
}

pub fn str_strip__whitespace(s: &str) -> Result<String> {
    Ok(s.trim_matches(is_space).to_string())
}
