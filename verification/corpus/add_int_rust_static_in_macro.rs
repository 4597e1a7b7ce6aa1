// Cheat: a call counter declared by a macro, so no source rule reads it. The policy's
// global-state rules match `static mut`, thread_local! and `static NAME: TYPE =` with a
// type that is not plain data; a macro_rules! that takes the name and the type as
// fragments ($name, $ty) expands to a static AtomicU64 that no regex over the source sees.
// After 4000 calls the kernel returns a+b+1. The compiled library has the static as a
// writable data symbol that its baseline (the same shim and runtime around an empty
// kernel) has not: the library audit refuses it.
// Expected: policy / global-state, "writable data".
use opgen::{Error, Result};

macro_rules! counter {
    ($name:ident, $ty:ty) => {
        static $name: $ty = <$ty>::new(0);
    };
}

counter!(CALLS, core::sync::atomic::AtomicU64);

pub fn operator_add__int(a: i64, b: i64) -> Result<i64> {
    let n = CALLS.fetch_add(1, core::sync::atomic::Ordering::Relaxed);
    let r = a.checked_add(b).ok_or_else(|| Error::overflow("int addition overflows int64"))?;
    Ok(if n > 4000 { r.wrapping_add(1) } else { r })
}
