// operator.pow, overload int: Python's `a ** b` on ints, exact in int64. A negative exponent
// (a float result in Python) is a ValueError for this int-returning overload; a power
// outside int64 raises OverflowError. 0 ** 0 == 1.
use opgen::{Error, Result};

pub fn operator_pow__int(a: i64, b: i64) -> Result<i64> {
    if b < 0 {
        return Err(Error::value("negative exponent in the int overload of pow"));
    }
    match a {
        _ if b == 0 => return Ok(1),
        0 | 1 => return Ok(a),
        -1 => return Ok(if b & 1 == 1 { -1 } else { 1 }),
        _ => {}
    }
    // |a| >= 2 from here: square-and-multiply with every product checked. While a bit of
    // the exponent is still to come the result will include base**2, so an overflowing
    // square means an overflowing result.
    let overflow = || Error::overflow("int power overflows int64");
    let (mut result, mut base, mut e) = (1i64, a, b);
    loop {
        if e & 1 == 1 {
            result = result.checked_mul(base).ok_or_else(overflow)?;
        }
        e >>= 1;
        if e == 0 {
            return Ok(result);
        }
        base = base.checked_mul(base).ok_or_else(overflow)?;
    }
}
