// operator.mul, overload float: one IEEE-754 double multiplication (inf * 0 is nan, signs of
// zero as IEEE says, overflow gives inf), exactly as Python's float `*`.
use opgen::Result;

pub fn operator_mul__float(a: f64, b: f64) -> Result<f64> {
    Ok(a * b)
}
