// torch.logsumexp, overload f32: torch.logsumexp(input, dim, keepdim).
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

type T = f32;
type R = T;

const PASSES: usize = 2;
#[derive(Clone, Copy)]
struct Acc { m: f64, s: f64, nan: bool }
const STRIPES: usize = 1; // two passes: the generic lane loop
fn combine(_a: &mut Acc, _b: &Acc) {}
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

const SHIFT: f64 = 6755399441055744.0; // 1.5 * 2^52
const LOG2E: f64 = std::f64::consts::LOG2_E;
const LN2_HI: f64 = 0.6931471803691238;
const LN2_LO: f64 = 1.9082149292705877e-10;

// exp(x) for x <= 0 (or nan), about 2e-10 relative (far below float32's 6e-8): x = k*ln2 + r,
// a degree-8 Taylor polynomial for exp(r), 2^k in the exponent bits; branch-free. Below -110
// exp is < 2e-48, nothing next to the sum (>= 1, the max's own term).
#[inline(always)]
fn exp_neg(x: f64) -> f64 {
    let x = if x < -110.0 { -110.0 } else { x };
    let kd = x * LOG2E + SHIFT;
    let kbits = kd.to_bits();
    let k = kd - SHIFT;
    let r = (x - k * LN2_HI) - k * LN2_LO;
    let mut p = 1.0 / 40320.0;
    p = p * r + 1.0 / 5040.0;
    p = p * r + 1.0 / 720.0;
    p = p * r + 1.0 / 120.0;
    p = p * r + 1.0 / 24.0;
    p = p * r + 1.0 / 6.0;
    p = p * r + 0.5;
    p = p * r + 1.0;
    p = p * r + 1.0;
    p * f64::from_bits(kbits.wrapping_add(1023) << 52)
}

// A lane of 64 or more: the max and the nan flag over 16 stripes, then the sum of exp(x - m)
// over 8 stripes of doubles. A nan row is nan, a row whose max is +-inf is +-inf, as torch.
fn fast_lane(v: &[T]) -> R {
    let mut mx = [T::NEG_INFINITY; 16];
    let mut bad = [false; 16];
    let chunks = v.chunks_exact(16);
    let tail = chunks.remainder();
    for c in chunks {
        for j in 0..16 {
            bad[j] |= c[j] != c[j];
            mx[j] = if c[j] > mx[j] { c[j] } else { mx[j] };
        }
    }
    let mut m = T::NEG_INFINITY;
    let mut nan = false;
    for &x in tail.iter().chain(mx.iter()) {
        nan |= x != x;
        m = if x > m { x } else { m };
    }
    nan |= bad.iter().any(|&b| b);
    if nan {
        return R::NAN;
    }
    if m.is_infinite() {
        return m as R;
    }
    let md = m as f64;
    let mut s = [0.0f64; 8];
    let chunks = v.chunks_exact(8);
    let tail = chunks.remainder();
    for c in chunks {
        for j in 0..8 {
            s[j] += exp_neg(c[j] as f64 - md);
        }
    }
    let t: f64 = tail.iter().map(|&x| exp_neg(x as f64 - md)).sum();
    let total = ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7])) + t;
    (total.ln() + md) as R
}

fn lane(v: &[T], ddof: i64) -> R {
    if v.len() >= 64 {
        return fast_lane(v);
    }
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

pub fn torch_logsumexp__f32(input: &TensorRef<f32>, dim: i64, keepdim: bool, out: &mut TensorMut<f32>) -> Result<()> {
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
