// operator.gt, overload float: Python's `a > b` on two doubles (greater than), as IEEE-754
// compares them: a nan on either side gives false; -0.0 and 0.0 are equal.
use opgen::Result;

pub fn operator_gt__float(a: f64, b: f64) -> Result<bool> {
    Ok(a > b)
}
