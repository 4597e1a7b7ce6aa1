// operator.neg, overload float: Python's `-a` on floats, a sign flip (-0.0 and 0.0 swap,
// infinities swap, nan stays nan); never 0.0 - a, which would give 0.0 for -(0.0).
use opgen::Result;

pub fn operator_neg__float(a: f64) -> Result<f64> {
    Ok(-a)
}
