// math.exp, overload float: Python's math.exp on a float. The C library's exp, through f64::exp
// (exp(inf) is inf, exp(-inf) is 0.0, exp(nan) is nan, underflow gives subnormals or 0.0 without
// error); a finite argument whose result overflows to infinity raises OverflowError
// "math range error", as CPython does.
use opgen::{Error, Result};

pub fn math_exp__float(x: f64) -> Result<f64> {
    let r = x.exp();
    if r.is_infinite() && x.is_finite() {
        return Err(Error::overflow("math range error"));
    }
    Ok(r)
}
