// numpy.exp, overload f64: out[i] = exp(x[i]) elementwise for float64 tensors, with libm's
// exp (f64::exp; glibc's is correctly rounded in practice, as NumPy's float64 exp is).
// IEEE semantics: exp(nan) = nan, exp(inf) = inf, exp(-inf) = 0, overflow to inf past
// about 709.78, gradual underflow to subnormals and 0. `x` may be strided (any strides,
// including 0 and negative), 0-d or empty; `out` is contiguous with x's shape.
use opgen::{Result, TensorMut, TensorRef};

pub fn numpy_exp__f64(x: &TensorRef<f64>, out: &mut TensorMut<f64>) -> Result<()> {
    let dst = out.as_mut_slice();
    match x.as_slice() {
        Some(src) => dst.iter_mut().zip(src).for_each(|(d, &s)| *d = s.exp()),
        None => dst.iter_mut().zip(x.iter()).for_each(|(d, s)| *d = s.exp()),
    }
    Ok(())
}
