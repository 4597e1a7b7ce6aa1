// math.isfinite, overload float: Python's math.isfinite on a float, false for nan, inf and -inf (by
// classification, f64::is_finite). No errors.
use opgen::Result;

pub fn math_isfinite__float(x: f64) -> Result<bool> {
    Ok(x.is_finite())
}
