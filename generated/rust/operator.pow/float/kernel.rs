// operator.pow, overload float: Python's `a ** b` on floats, with Python's errors.
//
// This follows CPython's float_pow case by case:
//   b == 0                       -> 1.0 (even for a nan)
//   a nan                        -> nan
//   b nan                        -> 1.0 if a == 1 else nan
//   b infinite                   -> 1.0 if |a| == 1; inf if (b > 0) == (|a| > 1); else 0.0
//                                   (so 0.0 ** -inf is inf, not an error, as in Python)
//   a infinite                   -> by the sign of b and the parity of b
//   a == +-0.0                   -> b < 0: ZeroDivisionError; else +-0.0 (sign kept for odd b)
//   a < 0, b not an integer      -> Python returns a complex number; the opgen reference turns
//                                   that into ValueError, except that CPython's complex power
//                                   raises OverflowError first when |a| ** b overflows.
//   a < 0, b an integer          -> -(|a| ** b) for odd b, |a| ** b for even b
//   |a| == 1                     -> +-1.0
//   otherwise pow() (f64::powf is libm's pow, as CPython uses); an infinite result from
//   finite a and b raises OverflowError.
use opgen::{Error, Result};

// CPython's DOUBLE_IS_ODD_INTEGER: fmod(fabs(w), 2.0) == 1.0.
fn is_odd_integer(w: f64) -> bool {
    w.abs() % 2.0 == 1.0
}

pub fn operator_pow__float(a: f64, b: f64) -> Result<f64> {
    if b == 0.0 {
        return Ok(1.0);
    }
    if a.is_nan() {
        return Ok(a);
    }
    if b.is_nan() {
        return Ok(if a == 1.0 { 1.0 } else { b });
    }
    if b.is_infinite() {
        let av = a.abs();
        if av == 1.0 {
            return Ok(1.0);
        }
        return Ok(if (b > 0.0) == (av > 1.0) { b.abs() } else { 0.0 });
    }
    if a.is_infinite() {
        let odd = is_odd_integer(b);
        if b > 0.0 {
            return Ok(if odd { a } else { a.abs() });
        }
        return Ok(if odd { 0.0f64.copysign(a) } else { 0.0 });
    }
    if a == 0.0 {
        if b < 0.0 {
            return Err(Error::zero_division("0.0 cannot be raised to a negative power"));
        }
        return Ok(if is_odd_integer(b) { a } else { 0.0 });
    }
    let mut base = a;
    let mut negate = false;
    if a < 0.0 {
        if b != b.floor() {
            if (-a).powf(b).is_infinite() {
                return Err(Error::overflow("complex exponentiation"));
            }
            return Err(Error::value("negative number cannot be raised to a fractional power"));
        }
        base = -a;
        negate = is_odd_integer(b);
    }
    if base == 1.0 {
        return Ok(if negate { -1.0 } else { 1.0 });
    }
    let r = base.powf(b);
    if r.is_infinite() {
        return Err(Error::overflow("(34, 'Numerical result out of range')"));
    }
    Ok(if negate { -r } else { r })
}
