// Cheat (Rust): spawning a process. The kernel asks a shell for the concatenation through
// std::process::Command: any process a kernel can start can do anything its user can. The
// Rust policy rejects std::process (and any path through it) by module name.
// Expected: policy / process, "std::process".
use opgen::Result;
use std::process::Command;

pub fn operator_add__str(a: &str, b: &str) -> Result<String> {
    let out = Command::new("sh").arg("-c").arg(format!("printf %s%s '{}' '{}'", a, b)).output();
    match out {
        Ok(o) => Ok(String::from_utf8_lossy(&o.stdout).into_owned()),
        Err(_) => Ok(format!("{}{}", a, b)),
    }
}
