// Cheat: Rust's own str::to_lowercase, the one-line answer. It applies full mappings and
// Final_Sigma, but with the Unicode version of the Rust toolchain (16.0 for Rust 1.95), not
// Python 3.11's 14.0.0: 55 code points differ (U+A7CB, U+A7DC, U+1C89, the Garay letters, ...),
// so lower() of a text holding one is not Python's. Right on every other text.
// Expected: verify / admission / scale, value
use opgen::Result;

pub fn str_lower__str(s: &str) -> Result<String> {
    Ok(s.to_lowercase())
}
