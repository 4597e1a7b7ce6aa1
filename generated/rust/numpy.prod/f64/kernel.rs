// numpy.prod, overload f64: numpy.prod(a, axis=axis, keepdims=keepdims).
//
// The product along the axis, multiplied in order in double with a separate power-of-two
// exponent (the running product is rescaled by 2^+-600 whenever it leaves [2^-500, 2^500], and
// subnormal or huge factors are rescaled first), so no intermediate product overflows,
// underflows or loses bits in the subnormal range; the result is rounded once at the end.
// An empty axis gives 1. IEEE products otherwise: 0 * inf is nan, nan propagates, the sign
// of a zero product is the product of the signs.
// out is contiguous in the row-major order of the kept dims, with or without keepdims (a kept
// size-1 axis does not change the order; the shim has checked out's shape). Two strategies: a
// contiguous tensor reduced over a dim that is not the last reduces up to 256 neighbouring
// outputs together, one input row at a time (contiguous inner loops); otherwise each output
// reduces its own lane (strided lanes gathered into a buffer first).
use opgen::{Error, Result, TensorMut, TensorRef};

type T = f64;
type R = T;

const PASSES: usize = 1;
const UP: f64 = 4.149515568880993e180; // 2^600
const DOWN: f64 = 2.409919865102884e-181; // 2^-600
const LO: f64 = 3.054936363499605e-151; // 2^-500
const HI: f64 = 3.273390607896142e150; // 2^500
#[derive(Clone, Copy)]
struct Acc { p: f64, e: i64 }
#[inline(always)]
fn init() -> Acc { Acc { p: 1.0, e: 0 } }
#[inline(always)]
fn step(a: &mut Acc, x: T, _k: usize, _pass: usize) {
    let mut v = x as f64;
    let av = v.abs();
    if av < LO && av != 0.0 {
        v *= UP;
        a.e -= 600;
    } else if av > HI && av != f64::INFINITY {
        v *= DOWN;
        a.e += 600;
    }
    a.p *= v;
    let ap = a.p.abs();
    if ap < LO && ap != 0.0 {
        a.p *= UP;
        a.e -= 600;
    } else if ap > HI && ap != f64::INFINITY {
        a.p *= DOWN;
        a.e += 600;
    }
}
const STRIPES: usize = 8;
fn combine(a: &mut Acc, b: &Acc) {
    a.p *= b.p; // both in [2^-500, 2^500] (or 0, inf, nan): no overflow or loss
    a.e += b.e;
    let ap = a.p.abs();
    if ap < LO && ap != 0.0 {
        a.p *= UP;
        a.e -= 600;
    } else if ap > HI && ap != f64::INFINITY {
        a.p *= DOWN;
        a.e += 600;
    }
}
#[inline(always)]
fn between(_a: &mut Acc, _n: usize, _pass: usize) {}
#[inline(always)]
fn pow2(k: i64) -> f64 {
    f64::from_bits(((k + 1023) as u64) << 52) // 2^k for k in -1022..=1023
}
// p * 2^e rounded once (p normal: the running product is kept in [2^-500, 2^500]).
fn ldexp(p: f64, e: i64) -> f64 {
    if p == 0.0 || !p.is_finite() {
        return p;
    }
    let bits = p.to_bits();
    let pe = ((bits >> 52) & 0x7ff) as i64 - 1022; // p = m * 2^pe, m in [0.5, 1)
    let m = f64::from_bits((bits & !(0x7ffu64 << 52)) | (1022u64 << 52));
    let big = pe + e;
    if big > 1024 {
        return f64::INFINITY.copysign(p);
    }
    if big >= -1021 {
        return (m * 2.0) * pow2(big - 1); // exact: a normal result
    }
    if big < -1074 {
        return 0.0f64.copysign(p); // below half the smallest subnormal
    }
    (m * pow2(big + 1074)) * f64::from_bits(1) // one rounding into the subnormals
}
#[inline(always)]
fn finish(a: &Acc, _n: usize, _ddof: i64) -> R { ldexp(a.p, a.e) as R }

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

pub fn numpy_prod__f64(a: &TensorRef<f64>, axis: i64, keepdims: bool, out: &mut TensorMut<f64>) -> Result<()> {
    let _ = keepdims;
    let ddof = 0i64;
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
