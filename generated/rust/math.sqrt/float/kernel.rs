// math.sqrt, overload float: Python's math.sqrt on a float. IEEE-754's correctly rounded square
// root (sqrt(-0.0) is -0.0, sqrt(inf) is inf, sqrt(nan) is nan); a negative argument, -inf
// included, raises ValueError "math domain error" as CPython does, where f64::sqrt gives nan.
use opgen::{Error, Result};

pub fn math_sqrt__float(x: f64) -> Result<f64> {
    if x < 0.0 {
        return Err(Error::value("math domain error"));
    }
    Ok(x.sqrt())
}
