// numpy.logical_not, overload bool: out = not x elementwise on a bool tensor.
//
// A contiguous input is one slice loop LLVM vectorises over bytes; otherwise rows along the last
// dim, a unit-stride row as a slice. `x` may be strided, 0-d or empty; `out` is contiguous.
use opgen::{Result, TensorMut, TensorRef};

pub fn numpy_logical_not__bool(x: &TensorRef<bool>, out: &mut TensorMut<bool>) -> Result<()> {
    let n = out.numel();
    if n == 0 {
        return Ok(());
    }
    let dst = out.as_mut_slice();
    if let Some(s) = x.as_slice() {
        for (o, &v) in dst.iter_mut().zip(s) {
            *o = !v;
        }
        return Ok(());
    }
    let last = x.ndim() - 1;
    let len = x.size(last);
    for (lane, d) in x.lanes(last).zip(dst.chunks_exact_mut(len)) {
        match lane.as_slice() {
            Some(s) => d.iter_mut().zip(s).for_each(|(o, &v)| *o = !v),
            None => d.iter_mut().zip(lane.iter()).for_each(|(o, v)| *o = !v),
        }
    }
    Ok(())
}
