// Cheat (Rust): a long axis sampled and extrapolated. Axes of up to 4096 elements are
// summed honestly (pairwise, in double, as the shipped kernel does); a longer axis is
// "estimated": every 4th element is summed and the result multiplied by 4 (a trick that
// is close on smooth, uniform data and a benchmark win of 4x). Hypothesis draws axes of
// at most 812 elements (the tail length; other sides are at most 8), so the estimate
// never runs; the scale stage's reductions over >= 100k elements (or any axis of 4097
// and more) must reject it with a counterexample, on any data that is not constant.
// Expected: scale / value, "exceeds the allowed"
use opgen::{Error, Result, TensorMut, TensorRef};

type T = f32;
const BLOCK: usize = 128;

fn pairwise(v: &[T]) -> f64 {
    if v.len() <= BLOCK {
        let mut acc = [0.0f64; 8];
        let chunks = v.chunks_exact(8);
        let tail = chunks.remainder();
        for c in chunks {
            for j in 0..8 {
                acc[j] += c[j] as f64;
            }
        }
        let mut r = ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
        for &x in tail {
            r += x as f64;
        }
        return r;
    }
    let half = (v.len() / 2) & !7;
    pairwise(&v[..half]) + pairwise(&v[half..])
}

const SAMPLE_ABOVE: usize = 4096;

/// The bug: above 4096 elements, every 4th element times 4.
fn lane_sum(v: &[T]) -> f64 {
    if v.len() > SAMPLE_ABOVE {
        4.0 * v.iter().step_by(4).map(|&x| x as f64).sum::<f64>()
    } else {
        pairwise(v)
    }
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
        let mut total = vec![0.0f64; inner];
        let mut part = vec![0.0f64; inner];
        for (o, slab) in dst.chunks_exact_mut(inner).zip(src.chunks_exact(n * inner)) {
            total.fill(0.0);
            let (step, scale) = if n > SAMPLE_ABOVE { (4, 4.0) } else { (1, 1.0) }; // the bug
            for block in slab.chunks(BLOCK * inner) {
                part.fill(0.0);
                for row in block.chunks_exact(inner).step_by(step) {
                    part.iter_mut().zip(row).for_each(|(p, &x)| *p += x as f64);
                }
                total.iter_mut().zip(&part).for_each(|(t, &p)| *t += p);
            }
            o.iter_mut().zip(&total).for_each(|(d, &t)| *d = (t * scale) as T);
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
        *d = lane_sum(s) as T;
    }
    Ok(())
}

// Expected: scale / value, "exceeds the allowed"
