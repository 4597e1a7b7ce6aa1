// torch.logsumexp, overload f64: torch.logsumexp(input, dim, keepdim).
//
// m + log(sum(exp(x - m))) in double, as torch computes it: m is the max along the dim, taken
// as 0 when it is +-inf (so an all -inf row, or an empty one, gives log(0) = -inf and a
// row with +inf gives inf); a nan anywhere gives nan.
// out is contiguous in the row-major order of the kept dims, with or without keepdims (a kept
// size-1 axis does not change the order; the shim has checked out's shape). Two strategies: a
// contiguous tensor reduced over a dim that is not the last reduces up to 256 neighbouring
// outputs together, one input row at a time (contiguous inner loops); otherwise each output
// reduces its own lane (strided lanes gathered into a buffer first).
use opgen::{Error, Result, TensorMut, TensorRef};

type T = f64;
type R = T;

const PASSES: usize = 2;
#[derive(Clone, Copy)]
struct Acc { m: f64, s: f64, nan: bool }
#[inline(always)]
fn init() -> Acc { Acc { m: f64::NEG_INFINITY, s: 0.0, nan: false } }
#[inline(always)]
fn step(a: &mut Acc, x: T, _k: usize, pass: usize) {
    let v = x as f64;
    if pass == 0 {
        a.nan = a.nan || v != v;
        a.m = if v > a.m { v } else { a.m };
    } else {
        a.s += (v - a.m).exp();
    }
}
#[inline(always)]
fn between(a: &mut Acc, _n: usize, pass: usize) {
    if pass == 0 && a.m.is_infinite() {
        a.m = 0.0;
    }
}
fn finish(a: &Acc, _n: usize, _ddof: i64) -> R {
    if a.nan {
        return R::NAN;
    }
    (a.s.ln() + a.m) as R
}

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

pub fn torch_logsumexp__f64(input: &TensorRef<f64>, dim: i64, keepdim: bool, out: &mut TensorMut<f64>) -> Result<()> {
    let a = input;
    let axis = dim;
    let ddof = 0i64;
    let _ = keepdim;
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
