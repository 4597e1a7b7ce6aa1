// operator.sub, overload float: one IEEE-754 double subtraction (inf - inf is nan, -0.0 - 0.0
// is -0.0, overflow gives inf), exactly as Python's float `-`.
use opgen::Result;

pub fn operator_sub__float(a: f64, b: f64) -> Result<f64> {
    Ok(a - b)
}
