// numpy.std, overload f32: numpy.std(a, axis=axis, ddof=ddof, keepdims=keepdims).
//
// sqrt of the variance: the sum of squared deviations from the mean over max(n - ddof, 0),
// two-pass in double, rounded once. An empty axis, or n - ddof <= 0 with a zero sum, gives
// nan; n - ddof <= 0 otherwise inf; inf or nan in a row gives nan.
// out is contiguous in the row-major order of the kept dims, with or without keepdims (a kept
// size-1 axis does not change the order; the shim has checked out's shape). Two strategies: a
// contiguous tensor reduced over a dim that is not the last reduces up to 256 neighbouring
// outputs together, one input row at a time (contiguous inner loops); otherwise each output
// reduces its own lane (strided lanes gathered into a buffer first).
use opgen::{Error, Result, TensorMut, TensorRef};

type T = f32;
type R = T;

const PASSES: usize = 2;
// Two passes in double: the mean, then the deviations d = x - mean, their sum c and the sum of
// their squares q; the corrected two-pass formula q - c*c/n removes the first-order error of
// the mean. The divisor is max(n - ddof, 0): 0 gives inf (nan for 0/0), as NumPy.
#[derive(Clone, Copy)]
struct Acc { s: f64, mean: f64, c: f64, q: f64 }
#[inline(always)]
fn init() -> Acc { Acc { s: 0.0, mean: 0.0, c: 0.0, q: 0.0 } }
#[inline(always)]
fn step(a: &mut Acc, x: T, _k: usize, pass: usize) {
    if pass == 0 {
        a.s += x as f64;
    } else {
        let d = x as f64 - a.mean;
        a.c += d;
        a.q += d * d;
    }
}
#[inline(always)]
fn between(a: &mut Acc, n: usize, pass: usize) {
    if pass == 0 {
        a.mean = a.s / n as f64;
    }
}
fn variance(a: &Acc, n: usize, ddof: i64) -> f64 {
    let mut ssd = a.q - a.c * a.c / n as f64;
    if ssd < 0.0 {
        ssd = 0.0;
    }
    let dn = n as i64 - ddof;
    let div = if dn > 0 { dn as f64 } else { 0.0 };
    ssd / div
}
fn finish(a: &Acc, n: usize, ddof: i64) -> R { variance(a, n, ddof).sqrt() as R }

fn lane(v: &[T], ddof: i64) -> R {
    let mut acc = init();
    for pass in 0..PASSES {
        for (k, &x) in v.iter().enumerate() {
            step(&mut acc, x, k, pass);
        }
        between(&mut acc, v.len(), pass);
    }
    finish(&acc, v.len(), ddof)
}

pub fn numpy_std__f32(a: &TensorRef<f32>, axis: i64, ddof: i64, keepdims: bool, out: &mut TensorMut<f32>) -> Result<()> {
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
    if let (Some(src), true) = (a.as_slice(), ax + 1 < a.ndim() && n > 0) {
        // (outer, n, inner) contiguous, out (outer, inner).
        let inner: usize = a.shape()[ax + 1..].iter().product();
        const COLS: usize = 256;
        let mut accs: Vec<Acc> = (0..COLS.min(inner)).map(|_| init()).collect();
        for (o, slab) in dst.chunks_exact_mut(inner).zip(src.chunks_exact(n * inner)) {
            let mut j0 = 0;
            while j0 < inner {
                let m = COLS.min(inner - j0);
                let acc = &mut accs[..m];
                acc.iter_mut().for_each(|s| *s = init());
                for pass in 0..PASSES {
                    for k in 0..n {
                        let row = &slab[k * inner + j0..k * inner + j0 + m];
                        for (s, &x) in acc.iter_mut().zip(row) {
                            step(s, x, k, pass);
                        }
                    }
                    acc.iter_mut().for_each(|s| between(s, n, pass));
                }
                for (d, s) in o[j0..j0 + m].iter_mut().zip(acc.iter()) {
                    *d = finish(s, n, ddof);
                }
                j0 += m;
            }
        }
        return Ok(());
    }
    let mut buf: Vec<T> = vec![0.0 as T; n];
    for (lane_v, d) in a.lanes(ax).zip(dst.iter_mut()) {
        let s = match lane_v.as_slice() {
            Some(s) => s,
            None => {
                lane_v.copy_to(&mut buf);
                &buf
            }
        };
        *d = lane(s, ddof);
    }
    Ok(())
}
