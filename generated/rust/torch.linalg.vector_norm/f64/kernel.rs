// torch.linalg.vector_norm, overload f64: torch.linalg.vector_norm(x, ord, dim, keepdim).
//
// ord inf: max |x|; -inf: min |x| (a nan anywhere gives nan); 0: the count of x != 0 (nan
// counts); 1: sum |x|; 2: sqrt(sum x^2); any other p: (sum |x|^p)^(1/p). A dim of size 1 gives
// |x| itself (ord 0: 1 or 0), as torch. An empty dim gives 0 for ord >= 0 and is a ValueError
// for ord < 0 and ord = inf.
// Everything in double, as torch: each term |x|^p (over- and underflowing where torch's does),
// summed pairwise (a running double sum over a million terms would not be accurate enough),
// then the p-th root.
// out is contiguous in the row-major order of the kept dims, with or without keepdim. Two
// strategies, picked from the layout: neighbouring outputs reduced together one input row at a
// time (contiguous inner loops, pairwise over the rows) when the reduced dim does not move
// fastest; otherwise each output reduces its own lane.
use opgen::{Error, Result, TensorMut, TensorRef};

type T = f64;
const NARROW: bool = false; // T is the accumulator's type: nothing to emulate
const BLOCK: usize = 32; // rows summed one after another in the column strategy, then a tree

const INF: u8 = 0;
const NINF: u8 = 1;
const ZERO: u8 = 2;
const ONE: u8 = 3;
const TWO: u8 = 4;
const THREE: u8 = 5;
const FOUR: u8 = 6;
const HALF: u8 = 7;
const ONEHALF: u8 = 8;
const NEGHALF: u8 = 9;
const NEG1: u8 = 10;
const NEG2: u8 = 11;
const GEN: u8 = 12;

// |x|^p in T (nan and +-inf give torch's values by IEEE rules).
#[inline(always)]
fn term<const M: u8>(x: T, p: f64) -> T {
    let a = x.abs();
    match M {
        ZERO => {
            if a != 0.0 {
                1.0
            } else {
                0.0
            }
        }
        ONE => a,
        TWO => a * a,
        THREE => a * a * a,
        FOUR => {
            let s = a * a;
            s * s
        }
        HALF => a.sqrt(),
        ONEHALF => a * a.sqrt(),
        NEGHALF => 1.0 / a.sqrt(),
        NEG1 => 1.0 / a,
        NEG2 => 1.0 / (a * a),
        _ => (a as f64).powf(p) as T, // `as` rounds, and gives inf above T::MAX
    }
}

// The cube root: pow(s, 1/3) and one Newton step (1/3 is not a double: pow alone errs by
// |ln s| * 2^-54 relative). f64::cbrt is not used: it links compiler_builtins' libm cbrt, whose
// CPU-feature cache is writable state the library policy refuses.
#[inline(always)]
fn cbrt(s: f64) -> f64 {
    let y = s.powf(1.0 / 3.0);
    if s > 1e-290 && s < 1e300 {
        y - (y * y * y - s) / (3.0 * y * y)
    } else {
        y
    }
}

// The p-th root of the sum s (>= 0, inf or nan), rounded once to T.
#[inline(always)]
fn finish<const M: u8>(s: f64, p: f64) -> T {
    let s = if NARROW && s > T::MAX as f64 { f64::INFINITY } else { s };
    let r = match M {
        ZERO | ONE => s,
        TWO => s.sqrt(),
        THREE => cbrt(s),
        FOUR => s.sqrt().sqrt(),
        HALF => s * s,
        NEG1 => 1.0 / s,
        NEG2 => 1.0 / s.sqrt(),
        _ => s.powf(1.0 / p),
    };
    r as T
}

// Pairwise sum of the terms of v: blocks of up to 256 in 16 running sums, combined as a tree
// (at most ~32 roundings deep at a million terms).
fn lane_sum<const M: u8>(v: &[T], p: f64) -> f64 {
    let n = v.len();
    if n <= 256 {
        let mut acc = [0.0f64; 16];
        let chunks = v.chunks_exact(16);
        let tail = chunks.remainder();
        for c in chunks {
            for j in 0..16 {
                acc[j] += term::<M>(c[j], p) as f64;
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
            r += term::<M>(x, p) as f64;
        }
        return r;
    }
    let half = (n / 2) & !15usize;
    lane_sum::<M>(&v[..half], p) + lane_sum::<M>(&v[half..], p)
}

fn lane<const M: u8>(v: &[T], p: f64) -> T {
    if M == INF || M == NINF {
        let mut mm = [if M == INF { 0.0 } else { T::INFINITY }; 8];
        let mut bad = [false; 8];
        let chunks = v.chunks_exact(8);
        let tail = chunks.remainder();
        for c in chunks {
            for j in 0..8 {
                let a = c[j].abs();
                bad[j] |= a != a;
                mm[j] = if M == INF { if a > mm[j] { a } else { mm[j] } } else if a < mm[j] { a } else { mm[j] };
            }
        }
        let mut m = mm[0];
        let mut nan = bad.iter().any(|&b| b);
        for &x in tail.iter().chain(mm[1..].iter()) {
            let a = x.abs();
            nan |= a != a;
            m = if M == INF { if a > m { a } else { m } } else if a < m { a } else { m };
        }
        return if nan { T::NAN } else { m };
    }
    finish::<M>(lane_sum::<M>(v, p), p)
}

// dst[j] = sum over the rows k0..k0+kn of term(slab[k * inner + j0 + j]), j < dst.len():
// pairwise over the rows, each block of up to 32 rows added row by row. `scratch` holds
// dst.len() f64s per level.
fn col_sum<const M: u8>(slab: &[T], inner: usize, j0: usize, k0: usize, kn: usize, p: f64, dst: &mut [f64],
                        scratch: &mut [f64]) {
    let m = dst.len();
    if kn <= BLOCK {
        dst.iter_mut().for_each(|d| *d = 0.0);
        for k in k0..k0 + kn {
            let row = &slab[k * inner + j0..k * inner + j0 + m];
            for (d, &x) in dst.iter_mut().zip(row) {
                *d += term::<M>(x, p) as f64;
            }
        }
        return;
    }
    let half = kn / 2;
    let (here, rest) = scratch.split_at_mut(m);
    col_sum::<M>(slab, inner, j0, k0, half, p, dst, rest);
    col_sum::<M>(slab, inner, j0, k0 + half, kn - half, p, here, rest);
    for (d, &s) in dst.iter_mut().zip(here.iter()) {
        *d += s;
    }
}

fn run<const M: u8>(a: &TensorRef<T>, ax: usize, p: f64, out: &mut TensorMut<T>) -> Result<()> {
    let n = a.size(ax);
    let dst = out.as_mut_slice();
    if dst.is_empty() {
        return Ok(());
    }
    if let (Some(src), true) = (a.as_slice(), ax + 1 < a.ndim()) {
        // (outer, n, inner) contiguous, out (outer, inner).
        let inner: usize = a.shape()[ax + 1..].iter().product();
        const COLS: usize = 256;
        let width = COLS.min(inner);
        let mut levels = 2usize;
        let mut k = n;
        while k > BLOCK {
            k = (k + 1) / 2;
            levels += 1;
        }
        let mut buf = vec![0.0f64; levels * width];
        let mut mm = vec![0.0 as T; width];
        let mut bad = vec![false; width];
        for (o, slab) in dst.chunks_exact_mut(inner).zip(src.chunks_exact(n * inner)) {
            let mut j0 = 0;
            while j0 < inner {
                let m = COLS.min(inner - j0);
                if M == INF || M == NINF {
                    let mm = &mut mm[..m];
                    let bad = &mut bad[..m];
                    mm.iter_mut().for_each(|v| *v = if M == INF { 0.0 } else { T::INFINITY });
                    bad.iter_mut().for_each(|b| *b = false);
                    for k in 0..n {
                        let row = &slab[k * inner + j0..k * inner + j0 + m];
                        for ((v, b), &x) in mm.iter_mut().zip(bad.iter_mut()).zip(row) {
                            let a = x.abs();
                            *b |= a != a;
                            *v = if M == INF { if a > *v { a } else { *v } } else if a < *v { a } else { *v };
                        }
                    }
                    for ((d, &v), &b) in o[j0..j0 + m].iter_mut().zip(mm.iter()).zip(bad.iter()) {
                        *d = if b { T::NAN } else { v };
                    }
                } else {
                    let (acc, scratch) = buf.split_at_mut(m);
                    col_sum::<M>(slab, inner, j0, 0, n, p, acc, scratch);
                    for (d, &s) in o[j0..j0 + m].iter_mut().zip(acc.iter()) {
                        *d = finish::<M>(s, p);
                    }
                }
                j0 += m;
            }
        }
        return Ok(());
    }
    let mut tmp: Vec<T> = vec![0.0 as T; n];
    for (lane_v, d) in a.lanes(ax).zip(dst.iter_mut()) {
        let s = match lane_v.as_slice() {
            Some(s) => s,
            None => {
                lane_v.copy_to(&mut tmp);
                &tmp
            }
        };
        *d = lane::<M>(s, p);
    }
    Ok(())
}

pub fn torch_linalg_vector_norm__f64(x: &TensorRef<f64>, ord: f64, dim: i64, keepdim: bool,
                                     out: &mut TensorMut<f64>) -> Result<()> {
    let _ = keepdim; // only out's shape, which the shim has checked
    let nd = x.ndim() as i64;
    if nd == 0 {
        // torch: a 0-d tensor is a one-element row (dim 0 or -1)
        if dim != 0 && dim != -1 {
            return Err(Error::value("dim out of range"));
        }
        let v = x.item();
        out.as_mut_slice()[0] = if ord == 0.0 { if v != 0.0 { 1.0 } else { 0.0 } } else { v.abs() };
        return Ok(());
    }
    if dim < -nd || dim >= nd {
        return Err(Error::value("dim out of range"));
    }
    let ax = (if dim < 0 { dim + nd } else { dim }) as usize;
    let n = x.size(ax);
    if n == 0 {
        if ord < 0.0 || ord == f64::INFINITY {
            return Err(Error::value(
                "linalg.vector_norm cannot compute this norm on an empty dim: the operation has no identity",
            ));
        }
        out.as_mut_slice().iter_mut().for_each(|d| *d = 0.0);
        return Ok(());
    }
    if out.as_mut_slice().is_empty() {
        return Ok(());
    }
    if ord.is_nan() {
        out.as_mut_slice().iter_mut().for_each(|d| *d = T::NAN);
        return Ok(());
    }
    let p = ord;
    if n == 1 && p != 0.0 {
        return run::<INF>(x, ax, p, out); // |x|, exactly (torch's result too)
    }
    match p {
        _ if p == f64::INFINITY => run::<INF>(x, ax, p, out),
        _ if p == f64::NEG_INFINITY => run::<NINF>(x, ax, p, out),
        _ if p == 0.0 => run::<ZERO>(x, ax, p, out),
        _ if p == 1.0 => run::<ONE>(x, ax, p, out),
        _ if p == 2.0 => run::<TWO>(x, ax, p, out),
        _ if p == 3.0 => run::<THREE>(x, ax, p, out),
        _ if p == 4.0 => run::<FOUR>(x, ax, p, out),
        _ if p == 0.5 => run::<HALF>(x, ax, p, out),
        _ if p == 1.5 => run::<ONEHALF>(x, ax, p, out),
        _ if p == -0.5 => run::<NEGHALF>(x, ax, p, out),
        _ if p == -1.0 => run::<NEG1>(x, ax, p, out),
        _ if p == -2.0 => run::<NEG2>(x, ax, p, out),
        _ => run::<GEN>(x, ax, p, out),
    }
}
