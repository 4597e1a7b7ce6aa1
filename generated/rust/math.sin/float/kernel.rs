// math.sin, overload float: Python's math.sin on a float (radians). The C library's sin through
// f64::sin, whose argument reduction is exact for every finite x (sin(-0.0) is -0.0, sin(nan) is nan);
// inf and -inf raise ValueError "math domain error", as CPython does, where f64::sin gives nan.
use opgen::{Error, Result};

pub fn math_sin__float(x: f64) -> Result<f64> {
    if x.is_infinite() {
        return Err(Error::value("math domain error"));
    }
    Ok(x.sin())
}
