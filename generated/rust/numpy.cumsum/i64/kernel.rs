// numpy.cumsum, overload i64: numpy.cumsum(a, axis=axis) for int64 tensors.
//
// Written by hand (not by a model). Each prefix is accumulated one after another from the first
// element with wrapping_add, so a prefix past int64's range wraps modulo 2**64 as NumPy's int64
// additions do (a plain `+` would panic in the checked build). A contiguous tensor scanned along a
// dim that is not the last advances a whole row of `inner` prefixes at once (contiguous loops);
// otherwise each lane is scanned on its own (strided lanes gathered first). out is contiguous with
// a's shape.
use opgen::{Error, Result, TensorMut, TensorRef};

type T = i64;

pub fn numpy_cumsum__i64(a: &TensorRef<i64>, axis: i64, out: &mut TensorMut<i64>) -> Result<()> {
    let nd = a.ndim() as i64;
    if axis < -nd || axis >= nd {
        return Err(Error::value("axis out of range"));
    }
    let ax = (if axis < 0 { axis + nd } else { axis }) as usize;
    let n = a.size(ax);
    if out.as_slice().is_empty() {
        return Ok(());
    }
    if let (Some(src), true) = (a.as_slice(), ax + 1 < a.ndim()) {
        let inner: usize = a.shape()[ax + 1..].iter().product();
        let dst = out.as_mut_slice();
        let mut acc: Vec<T> = vec![0; inner];
        for (o, slab) in dst.chunks_exact_mut(n * inner).zip(src.chunks_exact(n * inner)) {
            acc.fill(0);
            for (orow, row) in o.chunks_exact_mut(inner).zip(slab.chunks_exact(inner)) {
                for ((s, d), &x) in acc.iter_mut().zip(orow.iter_mut()).zip(row) {
                    *s = s.wrapping_add(x);
                    *d = *s;
                }
            }
        }
        return Ok(());
    }
    let mut buf: Vec<T> = vec![0; n];
    let mut res: Vec<T> = vec![0; n];
    let lanes: Vec<_> = a.lanes(ax).collect();
    for (lane_v, mut olane) in lanes.into_iter().zip(out.lanes_mut(ax)) {
        let v = match lane_v.as_slice() {
            Some(s) => s,
            None => {
                lane_v.copy_to(&mut buf);
                &buf
            }
        };
        let mut s: T = 0;
        for (d, &x) in res.iter_mut().zip(v) {
            s = s.wrapping_add(x);
            *d = s;
        }
        match olane.as_mut_slice() {
            Some(o) => o.copy_from_slice(&res),
            None => {
                for (i, &r) in res.iter().enumerate() {
                    olane.set(i, r);
                }
            }
        }
    }
    Ok(())
}
