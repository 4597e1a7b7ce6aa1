// math.isnan, overload float: Python's math.isnan on a float, true for a nan of either sign and any payload (by
// classification, f64::is_nan). No errors.
use opgen::Result;

pub fn math_isnan__float(x: f64) -> Result<bool> {
    Ok(x.is_nan())
}
