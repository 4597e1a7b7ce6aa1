// math.tanh, overload float: Python's math.tanh on a float, the C library's tanh through
// f64::tanh (odd: tanh(-0.0) is -0.0; tanh(+-inf) is +-1.0, tanh(nan) is nan; tiny x give x).
// No errors.
use opgen::Result;

pub fn math_tanh__float(x: f64) -> Result<f64> {
    Ok(x.tanh())
}
