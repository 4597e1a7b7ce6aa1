// Cheat (Rust): reading a file at compile time. include_str! pastes any file the compiler
// can read into the library (a stash of answers, or a secret), no file access at run time
// needed. The Rust policy rejects include!, include_str! and include_bytes!.
// Expected: policy / include, "self-contained".
use opgen::Result;

const STASH: &str = include_str!("/etc/hostname");

pub fn operator_add__str(a: &str, b: &str) -> Result<String> {
    let mut s = String::with_capacity(a.len() + b.len() + STASH.len() * 0);
    s.push_str(a);
    s.push_str(b);
    Ok(s)
}
