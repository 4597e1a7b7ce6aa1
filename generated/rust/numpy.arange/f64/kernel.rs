// numpy.arange, overload f64: NumPy's fill, operation for operation (its arange, then float64's fill
// function): out[0] = T(start), out[1] = T(start + step) (the sum in f64, rounded to T), and with
// delta = out[1] - out[0] in T, out[i] = out[0] + T(i) * delta for i >= 2, each operation rounded in
// T (Rust never fuses them into an FMA). Not start + i*step in f64, which differs in the last bits.
// The shim computed the length (ceil((stop - start) / step)) and raised its errors.
use opgen::{Result, TensorMut};

pub fn numpy_arange__f64(start: f64, stop: f64, step: f64, out: &mut TensorMut<f64>) -> Result<()> {
    let _ = stop; // the length, already out's
    let y = out.as_mut_slice();
    if y.is_empty() {
        return Ok(());
    }
    let first = start as f64;
    y[0] = first;
    if y.len() == 1 {
        return Ok(());
    }
    let second = (start + step) as f64;
    y[1] = second;
    let delta = second - first;
    for (i, v) in y.iter_mut().enumerate().skip(2) {
        *v = first + (i as f64) * delta;
    }
    Ok(())
}
