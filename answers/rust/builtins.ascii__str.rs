// builtins.ascii, overload str: Python's ascii(obj) of a str, which an f-string field {obj!a} and
// ascii(obj) compile to: repr's quote and escapes, and every non-ASCII code point escaped as
// \xNN, \uNNNN or \UNNNNNNNN (ascii() is repr() with backslashreplace over non-ASCII).
use opgen::Result;
use std::fmt::Write;

// \xNN, \uNNNN or \UNNNNNNNN: the shortest of the three that holds c, lower-case hex.
fn push_escape(out: &mut String, c: u32) {
    // Writing into a String cannot fail.
    let _ = if c <= 0xFF {
        write!(out, "\\x{:02x}", c)
    } else if c <= 0xFFFF {
        write!(out, "\\u{:04x}", c)
    } else {
        write!(out, "\\U{:08x}", c)
    };
}

pub fn builtins_ascii__str(obj: &str) -> Result<String> {
    // ' unless the text holds a ' and no "
    let quote = if obj.contains('\'') && !obj.contains('"') { '"' } else { '\'' };
    let mut out = String::with_capacity(obj.len() + 2);
    out.push(quote);
    for ch in obj.chars() {
        let c = ch as u32;
        match ch {
            _ if ch == quote || ch == '\\' => {
                out.push('\\');
                out.push(ch);
            }
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            _ if c < 0x20 || c >= 0x7F => push_escape(&mut out, c),
            _ => out.push(ch),
        }
    }
    out.push(quote);
    Ok(out)
}
