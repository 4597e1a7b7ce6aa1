// math.floor, overload float: Python's math.floor on a float, returned as an int. nan raises
// ValueError and +-inf OverflowError in Python's words; a floor outside int64 (>= 2**63 or
// < -2**63), which Python would return as a big int, raises OverflowError (never `as i64`,
// which saturates). -2**63 itself fits.
use opgen::{Error, Result};

pub fn math_floor__float(x: f64) -> Result<i64> {
    if x.is_nan() {
        return Err(Error::value("cannot convert float NaN to integer"));
    }
    if x.is_infinite() {
        return Err(Error::overflow("cannot convert float infinity to integer"));
    }
    let r = x.floor();
    // [-2**63, 2**63): both bounds are doubles exactly, so the comparison is exact.
    if !(r >= -9223372036854775808.0 && r < 9223372036854775808.0) {
        return Err(Error::overflow("math.floor() of this float does not fit in int64"));
    }
    Ok(r as i64)
}
