// operator.truediv, overload float: Python's `a / b` on floats. A zero divisor (0.0 or -0.0)
// raises ZeroDivisionError whatever a is (nan and inf included), as Python checks it first;
// otherwise one IEEE-754 double division (inf / inf is nan, overflow gives inf, no error).
use opgen::{Error, Result};

pub fn operator_truediv__float(a: f64, b: f64) -> Result<f64> {
    if b == 0.0 {
        return Err(Error::zero_division("float division by zero"));
    }
    Ok(a / b)
}
