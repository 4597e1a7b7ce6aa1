// numpy.min, overload f64: numpy.min(a, axis=axis, keepdims=keepdims).
//
// The smallest element along the axis; nan propagates (once the running min is nan it stays
// nan; a nan element replaces it). An empty axis is an error (ValueError), even if out is empty.
// out is contiguous in the row-major order of the kept dims, with or without keepdims (a kept
// size-1 axis does not change the order; the shim has checked out's shape). Two strategies: a
// contiguous tensor reduced over a dim that is not the last reduces up to 256 neighbouring
// outputs together, one input row at a time (contiguous inner loops); otherwise each output
// reduces its own lane (strided lanes gathered into a buffer first).
use opgen::{Error, Result, TensorMut, TensorRef};

type T = f64;
type R = T;

const PASSES: usize = 1;
#[derive(Clone, Copy)]
struct Acc { m: T }
#[inline(always)]
fn init() -> Acc { Acc { m: T::INFINITY } }
#[inline(always)]
fn step(a: &mut Acc, x: T, _k: usize, _pass: usize) { a.m = if x < a.m || x != x { x } else { a.m }; }
const STRIPES: usize = 16;
fn combine(a: &mut Acc, b: &Acc) { step(a, b.m, 0, 0); }
#[inline(always)]
fn between(_a: &mut Acc, _n: usize, _pass: usize) {}
#[inline(always)]
fn finish(a: &Acc, _n: usize, _ddof: i64) -> R { a.m }

fn lane(v: &[T], ddof: i64) -> R {
    if STRIPES > 1 && v.len() >= 4 * STRIPES {
        // STRIPES independent accumulators over interleaved elements, then combined (the
        // combination does not depend on the order: see combine).
        let mut st = [init(); STRIPES];
        let chunks = v.chunks_exact(STRIPES);
        let tail = chunks.remainder();
        for (c, chunk) in chunks.enumerate() {
            for j in 0..STRIPES {
                step(&mut st[j], chunk[j], c * STRIPES + j, 0);
            }
        }
        let base = v.len() - tail.len();
        for (i, &x) in tail.iter().enumerate() {
            step(&mut st[0], x, base + i, 0);
        }
        let mut acc = st[0];
        for j in 1..STRIPES {
            combine(&mut acc, &st[j]);
        }
        between(&mut acc, v.len(), 0);
        return finish(&acc, v.len(), ddof);
    }
    let mut acc = init();
    for pass in 0..PASSES {
        for (k, &x) in v.iter().enumerate() {
            step(&mut acc, x, k, pass);
        }
        between(&mut acc, v.len(), pass);
    }
    finish(&acc, v.len(), ddof)
}

pub fn numpy_min__f64(a: &TensorRef<f64>, axis: i64, keepdims: bool, out: &mut TensorMut<f64>) -> Result<()> {
    let _ = keepdims;
    let ddof = 0i64;
    let nd = a.ndim() as i64;
    if axis < -nd || axis >= nd {
        return Err(Error::value("axis out of range"));
    }
    let ax = (if axis < 0 { axis + nd } else { axis }) as usize;
    let n = a.size(ax);
    if n == 0 {
        return Err(Error::value("zero-size array to reduction operation which has no identity"));
    }
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
