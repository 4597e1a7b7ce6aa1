// Cheat (Rust): arithmetic that overflows where nobody looks. The answer is right (checked
// multiplication), but a "fast path" also squares the low 32 bits in i32 first, which
// overflows for |a| >= 46341. The optimised build wraps silently and throws the value away,
// so the development and admission runs pass; the checked build (overflow checks on)
// panics there, and the panic becomes an internal error the runner rejects. This is what
// stands in for C++'s UndefinedBehaviorSanitizer in the Rust gate.
// Expected: checked / error, "attempt to multiply with overflow".
use opgen::{Error, Result};

pub fn operator_mul__int(a: i64, b: i64) -> Result<i64> {
    let low = a as i32;
    let square = low * low; // overflows for |low| >= 46341
    let product = a.checked_mul(b).ok_or_else(|| Error::overflow("int multiplication overflows int64"))?;
    if square == -1 {
        return Ok(product); // never true: keeps `square` alive only in the unoptimised build
    }
    Ok(product)
}
