// operator.floordiv, overload float: Python's `a // b` on floats. A zero divisor (0.0 or -0.0)
// raises ZeroDivisionError whatever a is (nan and inf included). Otherwise CPython's
// float_floor_div: mod = fmod(a, b) (Rust's `%` on f64, exact); div = (a - mod) / b; div -= 1
// when mod is non-zero and its sign differs from b's; then floor(div), snapped up when
// div - floor(div) > 0.5, or copysign(0.0, a / b) when div is zero. So 5.0 // inf is 0.0,
// -5.0 // inf is -1.0, inf // 2.0 is nan, -0.0 // 3.0 is -0.0; an overflowing quotient is inf.
use opgen::{Error, Result};

pub fn operator_floordiv__float(a: f64, b: f64) -> Result<f64> {
    if b == 0.0 {
        return Err(Error::zero_division("float floor division by zero"));
    }
    let m = a % b;
    let mut div = (a - m) / b;
    if m != 0.0 && ((b < 0.0) != (m < 0.0)) {
        div -= 1.0;
    }
    if div != 0.0 {
        // nan counts as non-zero, as in C's `if (div)`
        let mut fl = div.floor();
        if div - fl > 0.5 {
            fl += 1.0;
        }
        return Ok(fl);
    }
    Ok(0.0f64.copysign(a / b))
}
