// numpy.any, overload f32: numpy.any(a, axis=axis, keepdims=keepdims), a bool tensor.
//
// True where any element along the axis is nonzero, an element being nonzero when x != 0 (nan, inf
// and subnormals are nonzero; -0.0 is zero). An empty axis gives false (no error). The result of a
// lane is decided by its first nonzero element, so every loop stops there. out is contiguous in the
// row-major order of the kept dims, with or without keepdims (a kept size-1 axis does not change
// the order; the shim has checked out's shape). Two strategies: a contiguous tensor reduced over a
// dim that is not the last tests up to 256 neighbouring outputs together, one input row at a time
// (contiguous inner loops), stopping once all of them are decided (checked every 16 rows);
// otherwise each output tests its own lane (a contiguous one in blocks of 64 with a branch-free
// inner loop, stopping after the first block that decides it; a strided one element by element,
// stopping at the deciding element).
use opgen::{Error, Result, TensorMut, TensorRef};

type T = f32;

// DECIDED is the result a lane gets from its first element that hits; !DECIDED if none does.
const DECIDED: bool = true;
#[inline(always)]
fn nonzero(x: T) -> bool {
    x != 0.0
}
#[inline(always)]
fn hit(x: T) -> bool {
    nonzero(x) == DECIDED
}

fn lane(v: &[T]) -> bool {
    const BLOCK: usize = 64;
    let chunks = v.chunks_exact(BLOCK);
    let tail = chunks.remainder();
    for chunk in chunks {
        if chunk.iter().fold(false, |h, &x| h | hit(x)) {
            return DECIDED;
        }
    }
    if tail.iter().any(|&x| hit(x)) {
        return DECIDED;
    }
    !DECIDED
}

pub fn numpy_any__f32(a: &TensorRef<f32>, axis: i64, keepdims: bool, out: &mut TensorMut<bool>) -> Result<()> {
    let _ = keepdims;
    let nd = a.ndim() as i64;
    if axis < -nd || axis >= nd {
        return Err(Error::value("axis out of range"));
    }
    let ax = (if axis < 0 { axis + nd } else { axis }) as usize;
    let n = a.size(ax);
    let dst = out.as_mut_slice();
    if dst.is_empty() {
        return Ok(());
    }
    if n == 0 {
        dst.fill(!DECIDED);
        return Ok(());
    }
    if let (Some(src), true) = (a.as_slice(), ax + 1 < a.ndim()) {
        // (outer, n, inner) contiguous, out (outer, inner).
        let inner: usize = a.shape()[ax + 1..].iter().product();
        const COLS: usize = 256;
        let mut accs = vec![false; COLS.min(inner)];
        for (o, slab) in dst.chunks_exact_mut(inner).zip(src.chunks_exact(n * inner)) {
            let mut j0 = 0;
            while j0 < inner {
                let m = COLS.min(inner - j0);
                let acc = &mut accs[..m];
                acc.fill(false);
                for k in 0..n {
                    let row = &slab[k * inner + j0..k * inner + j0 + m];
                    for (s, &x) in acc.iter_mut().zip(row) {
                        *s |= hit(x);
                    }
                    // every output of the block decided: the remaining rows cannot change them
                    if k % 16 == 15 && acc.iter().all(|&s| s) {
                        break;
                    }
                }
                for (d, &s) in o[j0..j0 + m].iter_mut().zip(acc.iter()) {
                    *d = if s { DECIDED } else { !DECIDED };
                }
                j0 += m;
            }
        }
        return Ok(());
    }
    for (lane_v, d) in a.lanes(ax).zip(dst.iter_mut()) {
        let decided = match lane_v.as_slice() {
            Some(s) => lane(s) == DECIDED,
            None => lane_v.iter().any(hit),
        };
        *d = if decided { DECIDED } else { !DECIDED };
    }
    Ok(())
}
