// math.cos, overload float: Python's math.cos on a float (radians). The C library's cos through
// f64::cos, whose argument reduction is exact for every finite x (cos(-0.0) is 1.0, cos(nan) is nan);
// inf and -inf raise ValueError "math domain error", as CPython does, where f64::cos gives nan.
use opgen::{Error, Result};

pub fn math_cos__float(x: f64) -> Result<f64> {
    if x.is_infinite() {
        return Err(Error::value("math domain error"));
    }
    Ok(x.cos())
}
