// numpy.linalg.norm, overload f64: numpy.linalg.norm(x, axis=axis, keepdims=keepdims) with ord=None,
// the 2-norm sqrt(sum x^2) along one axis.
// Every square is formed in f64 and the squares summed pairwise in f64: along a lane, blocks of
// up to 256 elements in 16 running sums combined as a tree; for a contiguous tensor reduced over
// a dim that is not the last, up to 256 neighbouring outputs reduced together one input row at a
// time, pairwise over the rows (blocks of 32 rows added row by row). The square root is taken in
// f64 and rounded to the output type once. Squares over- and underflow as NumPy's do (|x| above ~1.3e154 gives
// inf).
// An empty axis gives 0 (sqrt of the empty sum); nan anywhere in a row gives nan, inf gives inf,
// as IEEE arithmetic does. keepdims only changes out's shape (checked by the shim), not its
// element order. Strided lanes are gathered into a buffer first.
use opgen::{Error, Result, TensorMut, TensorRef};

type T = f64;
const BLOCK: usize = 32; // rows added one after another in the column strategy, then a tree
const COLS: usize = 256; // outputs reduced together in the column strategy

#[inline(always)]
fn sq(v: T) -> f64 {
    let d = v as f64;
    d * d
}

// Pairwise sum of the squares of v.
fn lane_sq(v: &[T]) -> f64 {
    let n = v.len();
    if n <= 256 {
        let mut acc = [0.0f64; 16];
        let chunks = v.chunks_exact(16);
        let tail = chunks.remainder();
        for c in chunks {
            for j in 0..16 {
                acc[j] += sq(c[j]);
            }
        }
        let mut w = 8;
        while w >= 1 {
            for j in 0..w {
                acc[j] += acc[j + w];
            }
            w /= 2;
        }
        let mut r = acc[0];
        for &x in tail {
            r += sq(x);
        }
        return r;
    }
    let half = (n / 2) & !15usize;
    lane_sq(&v[..half]) + lane_sq(&v[half..])
}

// dst[j] = the sum over the rows k0..k0+kn of slab[k * inner + j0 + j]^2, j < dst.len(): pairwise
// over the rows, each block of up to BLOCK rows added row by row. `scratch` holds dst.len() f64s
// per level.
fn col_sq(slab: &[T], inner: usize, j0: usize, k0: usize, kn: usize, dst: &mut [f64], scratch: &mut [f64]) {
    let m = dst.len();
    if kn <= BLOCK {
        dst.iter_mut().for_each(|d| *d = 0.0);
        for k in k0..k0 + kn {
            let row = &slab[k * inner + j0..k * inner + j0 + m];
            for (d, &x) in dst.iter_mut().zip(row) {
                *d += sq(x);
            }
        }
        return;
    }
    let half = kn / 2;
    let (here, rest) = scratch.split_at_mut(m);
    col_sq(slab, inner, j0, k0, half, dst, rest);
    col_sq(slab, inner, j0, k0 + half, kn - half, here, rest);
    for (d, &s) in dst.iter_mut().zip(here.iter()) {
        *d += s;
    }
}

#[inline(always)]
fn root(s: f64) -> T {
    s.sqrt() as T
}

pub fn numpy_linalg_norm__f64(x: &TensorRef<f64>, axis: i64, keepdims: bool, out: &mut TensorMut<f64>) -> Result<()> {
    let _ = keepdims; // only out's shape, which the shim has checked
    let nd = x.ndim() as i64;
    if axis < -nd || axis >= nd {
        return Err(Error::value("axis out of range"));
    }
    let ax = (if axis < 0 { axis + nd } else { axis }) as usize;
    let dst = out.as_mut_slice();
    if dst.is_empty() {
        return Ok(());
    }
    let n = x.size(ax);
    if n == 0 {
        dst.fill(0.0); // the empty sum
        return Ok(());
    }
    if let (Some(src), true) = (x.as_slice(), ax + 1 < x.ndim()) {
        // (outer, n, inner) contiguous, out (outer, inner).
        let inner: usize = x.shape()[ax + 1..].iter().product();
        let width = COLS.min(inner);
        let mut levels = 2usize;
        let mut k = n;
        while k > BLOCK {
            k = (k + 1) / 2;
            levels += 1;
        }
        let mut buf = vec![0.0f64; levels * width];
        for (o, slab) in dst.chunks_exact_mut(inner).zip(src.chunks_exact(n * inner)) {
            let mut j0 = 0;
            while j0 < inner {
                let m = COLS.min(inner - j0);
                let (acc, scratch) = buf.split_at_mut(m);
                col_sq(slab, inner, j0, 0, n, acc, scratch);
                for (d, &s) in o[j0..j0 + m].iter_mut().zip(acc.iter()) {
                    *d = root(s);
                }
                j0 += m;
            }
        }
        return Ok(());
    }
    let mut tmp: Vec<T> = vec![0.0 as T; n];
    for (lane, d) in x.lanes(ax).zip(dst.iter_mut()) {
        let s = match lane.as_slice() {
            Some(s) => s,
            None => {
                lane.copy_to(&mut tmp);
                &tmp
            }
        };
        *d = root(lane_sq(s));
    }
    Ok(())
}
