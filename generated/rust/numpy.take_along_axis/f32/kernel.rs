// numpy.take_along_axis, overload f32: numpy.take_along_axis(arr, indices, axis=axis).
//
// The shim has checked the axis, the ranks, the broadcast and every index (IndexError outside
// [-n, n)), and hands over indices as a view of out's shape and arr as one of out's shape with
// arr's own length n along the axis (stride 0 along broadcast dims). So, lane by lane along the
// axis (the three tensors' lanes in the same row-major order of the other dims),
// out[.., k, ..] = arr[.., indices[.., k, ..], ..], plus n for a negative index (checked again).
// Values are copied bit for bit.
use opgen::{Error, Result, TensorMut, TensorRef};

type T = f32;

pub fn numpy_take_along_axis__f32(arr: &TensorRef<f32>, indices: &TensorRef<i64>, axis: i64,
                                   out: &mut TensorMut<f32>) -> Result<()> {
    let nd = arr.ndim() as i64;
    if axis < -nd || axis >= nd {
        return Err(Error::value("axis out of range"));
    }
    let ax = (if axis < 0 { axis + nd } else { axis }) as usize;
    if out.as_slice().is_empty() {
        return Ok(());
    }
    let n = arr.size(ax) as i64;
    for ((src, ind), mut dst) in arr.lanes(ax).zip(indices.lanes(ax)).zip(out.lanes_mut(ax)) {
        for k in 0..ind.len() {
            let v = ind.get(k);
            if v < -n || v >= n {
                return Err(Error::index(format!("index {} is out of bounds for axis {} with size {}", v, ax, n)));
            }
            let value: T = src.get((if v < 0 { v + n } else { v }) as usize);
            dst.set(k, value);
        }
    }
    Ok(())
}
