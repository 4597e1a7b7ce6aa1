// operator.mod, overload float: Python's `a % b` on floats. A zero divisor (0.0 or -0.0) raises
// ZeroDivisionError whatever a is (nan and inf included). Otherwise CPython's float_rem:
// mod = fmod(a, b) (Rust's `%` on f64, exact); mod += b when mod is non-zero and its sign
// differs from b's; a zero mod becomes copysign(0.0, b). So -0.0 % 3.0 is 0.0,
// -5.0 % inf is inf, inf % 2.0 is nan.
use opgen::{Error, Result};

pub fn operator_mod__float(a: f64, b: f64) -> Result<f64> {
    if b == 0.0 {
        return Err(Error::zero_division("float modulo by zero"));
    }
    let m = a % b;
    if m != 0.0 {
        // nan counts as non-zero
        return Ok(if (b < 0.0) != (m < 0.0) { m + b } else { m });
    }
    Ok(0.0f64.copysign(b))
}
