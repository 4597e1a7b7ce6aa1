// opgen.masked_fill, overload f64: out = x with out[mask] = value (NumPy's x[mask] = value on a copy of x).
//
// mask covers x's first k = mask.ndim dims (the shim has checked the shapes, and a mask with a dim of 0
// against an x dim of 1 sets nothing). out is contiguous in C order, so the row of leading index r (in C
// order over the first k dims) is the block [r * inner, (r + 1) * inner), inner = prod(x.shape[k..]).
// x is copied whole into out (a plain copy when it is contiguous, else in C order through its strides),
// then the mask is read once in C order and every row whose element is true is filled with value, cast
// once to f64 as NumPy's setitem casts the Python scalar.
use opgen::{Result, TensorMut, TensorRef};

pub fn opgen_masked_fill__f64(x: &TensorRef<f64>, mask: &TensorRef<bool>, value: f64, out: &mut TensorMut<f64>) -> Result<()> {
    let k = mask.ndim();
    let inner: usize = x.shape()[k..].iter().product();
    let dst = out.as_mut_slice();
    match x.as_slice() {
        Some(src) => dst.copy_from_slice(src),
        None => {
            for (d, v) in dst.iter_mut().zip(x.iter()) {
                *d = v;
            }
        }
    }
    if mask.numel() == 0 {
        return Ok(()); // an empty mask (a dim of 0 against a dim of 1) sets nothing
    }
    let v = value;
    for (r, keep) in mask.iter().enumerate() {
        if keep {
            dst[r * inner..(r + 1) * inner].fill(v);
        }
    }
    Ok(())
}
