// numpy.arange, overload i64: out[i] = start + i*step over the length the shim computed from the
// bounds (ceil((stop - start) / step), its errors raised before the kernel runs). Wrapping arithmetic
// so that no intermediate panics; the values themselves fit, since each lies between start and stop.
use opgen::{Result, TensorMut};

pub fn numpy_arange__i64(start: i64, stop: i64, step: i64, out: &mut TensorMut<i64>) -> Result<()> {
    let _ = stop; // the length, already out's
    for (i, y) in out.as_mut_slice().iter_mut().enumerate() {
        *y = start.wrapping_add((i as i64).wrapping_mul(step));
    }
    Ok(())
}
