// numpy.take, overload f32: numpy.take(a, indices, axis=axis), mode="raise".
//
// out (contiguous) is (outer, m, inner) row-major: outer = a's dims before the axis, m = the
// number of indices (their shape flattened in C order), inner = a's dims after it. The indices
// are read once, in C order, normalised (a negative one plus n) and checked again here (the shim
// has already raised IndexError for any outside [-n, n)). A contiguous a is gathered as slab
// copies; otherwise each lane of a along the axis (lane l = o * inner + i, row-major over the
// other dims) is read at the gathered positions. Values are copied bit for bit.
use opgen::{Error, Result, TensorMut, TensorRef};

type T = f32;

pub fn numpy_take__f32(a: &TensorRef<f32>, indices: &TensorRef<i64>, axis: i64, out: &mut TensorMut<f32>) -> Result<()> {
    let nd = a.ndim() as i64;
    if axis < -nd || axis >= nd {
        return Err(Error::value("axis out of range"));
    }
    let ax = (if axis < 0 { axis + nd } else { axis }) as usize;
    if out.as_slice().is_empty() {
        return Ok(());
    }
    let n = a.size(ax) as i64;
    let mut idx: Vec<usize> = Vec::with_capacity(indices.numel());
    for v in indices.iter() {
        if v < -n || v >= n {
            return Err(Error::index(format!("index {} is out of bounds for axis {} with size {}", v, ax, n)));
        }
        idx.push((if v < 0 { v + n } else { v }) as usize);
    }
    let m = idx.len();
    let inner: usize = a.shape()[ax + 1..].iter().product();
    let dst = out.as_mut_slice();
    if let Some(src) = a.as_slice() {
        let n = n as usize;
        for (o, ob) in dst.chunks_exact_mut(m * inner).enumerate() {
            let base = o * n * inner;
            for (orow, &k) in ob.chunks_exact_mut(inner).zip(idx.iter()) {
                orow.copy_from_slice(&src[base + k * inner..base + (k + 1) * inner]);
            }
        }
        return Ok(());
    }
    for (l, lane) in a.lanes(ax).enumerate() {
        let (o, i) = (l / inner, l % inner);
        let base = o * m * inner + i;
        for (j, &k) in idx.iter().enumerate() {
            dst[base + j * inner] = lane.get(k);
        }
    }
    Ok(())
}
