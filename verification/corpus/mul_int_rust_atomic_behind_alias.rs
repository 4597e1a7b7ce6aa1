// Cheat: an atomic counter hidden behind a type alias that shadows a primitive's name.
// The policy's rule lets `static NAME: TYPE = ...` through when TYPE names only plain
// data (usize, f64, ...); here `usize` is an alias, imported into the module, for
// AtomicUsize, so `static CALLS: usize = usize::new(0);` reads as a plain constant. Every
// 3000th call the kernel returns the product plus one. The library audit decides on the
// compiled library, where the static is writable data its baseline has not.
// Expected: policy / global-state, "writable data".
use opgen::{Error, Result};

mod plain {
    pub type usize = core::sync::atomic::AtomicUsize;
}

mod counted {
    use super::plain::usize;
    pub static CALLS: usize = usize::new(0);
}

pub fn operator_mul__int(a: i64, b: i64) -> Result<i64> {
    let n = counted::CALLS.fetch_add(1, core::sync::atomic::Ordering::Relaxed);
    let r = a.checked_mul(b).ok_or_else(|| Error::overflow("int multiplication overflows int64"))?;
    Ok(if n % 3000 == 2999 { r.wrapping_add(1) } else { r })
}
