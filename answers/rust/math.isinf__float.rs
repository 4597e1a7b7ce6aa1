// math.isinf, overload float: Python's math.isinf on a float, true for inf and -inf (by
// classification, f64::is_infinite). No errors.
use opgen::Result;

pub fn math_isinf__float(x: f64) -> Result<bool> {
    Ok(x.is_infinite())
}
