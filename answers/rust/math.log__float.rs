// math.log, overload float: Python's one-argument math.log on a float. The C library's log,
// through f64::ln, for x > 0 (log(inf) is inf, log(nan) is nan); 0.0, -0.0, a negative x and
// -inf raise ValueError "math domain error", as CPython does, where f64::ln gives -inf or nan.
use opgen::{Error, Result};

pub fn math_log__float(x: f64) -> Result<f64> {
    if x <= 0.0 {
        // nan compares false and goes on to ln, which returns it
        return Err(Error::value("math domain error"));
    }
    Ok(x.ln())
}
