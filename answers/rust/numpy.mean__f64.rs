// numpy.mean, overload f64: numpy.mean(a, axis=axis, keepdims=keepdims).
// The sum along the axis (accumulated in double: blocked column sums for a contiguous tensor
// reduced over a dim that is not the last, pairwise lane sums otherwise) divided by the axis
// length. keepdims only changes out's shape (checked by the shim), not its element order.
// An empty axis gives nan; nan and inf propagate.
use opgen::{Error, Result, TensorMut, TensorRef};

type T = f64;
const BLOCK: usize = 128;

fn pairwise(v: &[T]) -> f64 {
    if v.len() <= BLOCK {
        let mut acc = [0.0f64; 8];
        let chunks = v.chunks_exact(8);
        let tail = chunks.remainder();
        for c in chunks {
            for j in 0..8 {
                acc[j] += c[j];
            }
        }
        let mut r = ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
        for &x in tail {
            r += x;
        }
        return r;
    }
    let half = (v.len() / 2) & !7;
    pairwise(&v[..half]) + pairwise(&v[half..])
}

pub fn numpy_mean__f64(a: &TensorRef<f64>, axis: i64, keepdims: bool, out: &mut TensorMut<f64>) -> Result<()> {
    let _ = keepdims;
    let nd = a.ndim() as i64;
    if axis < -nd || axis >= nd {
        return Err(Error::value("axis out of range"));
    }
    let ax = (if axis < 0 { axis + nd } else { axis }) as usize;
    let dst = out.as_mut_slice();
    if dst.is_empty() {
        return Ok(());
    }
    let n = a.size(ax);
    let nf = n as f64;
    if n == 0 {
        dst.fill(T::NAN);
        return Ok(());
    }
    if let (Some(src), true) = (a.as_slice(), ax + 1 < a.ndim()) {
        // (outer, n, inner) contiguous, out (outer, inner).
        let inner: usize = a.shape()[ax + 1..].iter().product();
        let mut total = vec![0.0f64; inner];
        let mut part = vec![0.0f64; inner];
        for (o, slab) in dst.chunks_exact_mut(inner).zip(src.chunks_exact(n * inner)) {
            total.fill(0.0);
            for block in slab.chunks(BLOCK * inner) {
                part.fill(0.0);
                for row in block.chunks_exact(inner) {
                    part.iter_mut().zip(row).for_each(|(p, &x)| *p += x);
                }
                total.iter_mut().zip(&part).for_each(|(t, &p)| *t += p);
            }
            o.iter_mut().zip(&total).for_each(|(d, &t)| *d = (t / nf) as T);
        }
        return Ok(());
    }
    let mut buf = vec![0.0 as T; n];
    for (lane, d) in a.lanes(ax).zip(dst.iter_mut()) {
        let s = match lane.as_slice() {
            Some(s) => s,
            None => {
                lane.copy_to(&mut buf);
                &buf
            }
        };
        *d = (pairwise(s) / nf) as T;
    }
    Ok(())
}
