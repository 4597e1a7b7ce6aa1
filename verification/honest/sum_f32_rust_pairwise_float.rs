// Honest (Rust): numpy.sum f32 as a pairwise sum carried entirely in float32 (NumPy's own
// float32 algorithm: blocks of 128 summed with eight float32 partial sums, halves added
// pairwise), no double anywhere. Error about (8 + log2 n) * 2**-24 * sum|a|: 1.7e-6 at a
// million elements, far inside the spec's 1e-4. A contiguous tensor reduced over a dim
// that is not the last is summed as rows of outputs, 128 rows into a float32 partial at a
// time, partials then added pairwise as well. Must be admitted by every stage, the scale
// stage included.
use opgen::{Error, Result, TensorMut, TensorRef};

type T = f32;
const BLOCK: usize = 128;

fn pairwise(v: &[T]) -> T {
    if v.len() <= BLOCK {
        let mut acc = [0.0 as T; 8];
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

pub fn numpy_sum__f32(a: &TensorRef<f32>, axis: i64, out: &mut TensorMut<f32>) -> Result<()> {
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
    if n == 0 {
        dst.fill(0.0);
        return Ok(());
    }
    if let (Some(src), true) = (a.as_slice(), ax + 1 < a.ndim()) {
        // (outer, n, inner) contiguous, out (outer, inner).
        let inner: usize = a.shape()[ax + 1..].iter().product();
        // Partial sums of 128 rows each, in float32, then added pairwise.
        let blocks = n.div_ceil(BLOCK);
        let mut parts = vec![0.0 as T; blocks * inner];
        for (o, slab) in dst.chunks_exact_mut(inner).zip(src.chunks_exact(n * inner)) {
            parts.fill(0.0);
            for (part, block) in parts.chunks_exact_mut(inner).zip(slab.chunks(BLOCK * inner)) {
                for row in block.chunks_exact(inner) {
                    part.iter_mut().zip(row).for_each(|(p, &x)| *p += x);
                }
            }
            let mut w = blocks;
            while w > 1 {
                let half = w / 2;
                for q in 0..half {
                    for j in 0..inner {
                        parts[q * inner + j] += parts[(w - half + q) * inner + j];
                    }
                }
                w -= half;
            }
            o.copy_from_slice(&parts[..inner]);
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
        *d = pairwise(s);
    }
    Ok(())
}
