// torch.nn.functional.hardswish, overload f32: out = (x * min(max(x + 3, 0), 6)) / 6 in float32,
// in PyTorch's order (three correctly rounded operations), so bit for bit PyTorch's result:
// nan propagates through the clamp (the comparisons are written so a nan lane keeps nan),
// -inf gives -inf * 0 = nan, +inf gives inf, -0.0 gives -0.0, x <= -3 gives -0.0.
//
// `out` is contiguous with input's shape; input may be strided (rows along the last dim are
// gathered into a buffer when they are not contiguous). The per-element code is branchless
// (selects and bit operations), so LLVM vectorises it. Large tensors are split over scoped
// threads, at most opgen::max_threads() of them.
use opgen::{Result, TensorMut, TensorRef};

type T = f32;
#[allow(dead_code)]
type U = u32;
#[allow(dead_code)]
type I = i32;
// Elements per thread below which one thread is faster (a scoped thread is spawned per call).
const PER_THREAD_MIN: usize = 1 << 20;

const MANT: u32 = 23;
const BIAS: I = 127;
const MAGIC: T = 12582912.0; // 1.5 * 2^mant: adding and subtracting it rounds to an integer
const LN2_HI: T = 0.693359375; // ln2 in two parts, n * LN2_HI exact
const LN2_LO: T = -2.12194440e-4;
const LOG2E: T = 1.44269504088896341;

#[inline(always)]
fn pow2(e: I) -> T {
    // 2^e for e in the normal exponent range, exactly
    T::from_bits((e.wrapping_add(BIAS) as U) << MANT)
}

#[inline(always)]
fn exp_poly(r: T) -> T {
    let mut p: T = 1.9875691500e-4;
    p = p * r + 1.3981999507e-3;
    p = p * r + 8.3334519073e-3;
    p = p * r + 4.1665795894e-2;
    p = p * r + 1.6666665459e-1;
    p = p * r + 5.0000001201e-1;
    p * (r * r) + r + 1.0
}

// exp(t) over the whole range: inf above the overflow edge, correctly scaled into the
// subnormals and 0 below the underflow edge, nan for nan (2^n as two normal powers of two).
#[allow(dead_code)]
#[inline(always)]
fn exp(t: T) -> T {
    let t = if t > 100.0 { 100.0 } else { t };
    let t = if t < -104.0 { -104.0 } else { t }; // nan compares false and passes both clamps
    let kd = t * LOG2E + MAGIC;
    let n = kd - MAGIC; // t * log2(e) rounded to an integer
    let r = (t - n * LN2_HI) - n * LN2_LO;
    let p = exp_poly(r);
    // n as an integer, from the low mantissa bits of kd (no float-to-int conversion, which
    // LLVM would not vectorise); garbage for nan, whose p is nan
    let e = (kd.to_bits() as I).wrapping_sub(MAGIC.to_bits() as I);
    let e1 = e >> 1;
    p * pow2(e1) * pow2(e - e1)
}

// expm1(x) for x <= 0 (lanes above 0 give garbage the caller discards; nan gives nan):
// expm1(x) = 2^n expm1(r) + (2^n - 1), expm1(r) by its Taylor polynomial on |r| <= ln2/2.
#[allow(dead_code)]
#[inline(always)]
fn expm1_neg(x0: T) -> T {
    let x = if x0 < -30.0 { -30.0 } else { x0 }; // below: the result rounds to -1
    let x = if x > 0.0 { 0.0 } else { x };
    let kd = x * LOG2E + MAGIC;
    let n = kd - MAGIC; // x * log2(e) rounded to an integer, in [-58, 0]
    let r = (x - n * LN2_HI) - n * LN2_LO;
    let mut p: T = 1.0 / 40320.0;
    p = p * r + 1.0 / 5040.0;
    p = p * r + 1.0 / 720.0;
    p = p * r + 1.0 / 120.0;
    p = p * r + 1.0 / 24.0;
    p = p * r + 1.0 / 6.0;
    p = p * r + 0.5;
    let q = p * (r * r) + r;
    let s = pow2((kd.to_bits() as I).wrapping_sub(MAGIC.to_bits() as I));
    let y = s * q + (s - 1.0);
    if x == 0.0 { x } else { y } // expm1(+-0) = +-0
}

// log(w) for normal w >= 1: musl's reduction, fdlibm's polynomial in s = f / (2 + f).
#[allow(dead_code)]
#[inline(always)]
fn log_ge1(w: T) -> T {
    let mut ix = w.to_bits();
    ix = ix.wrapping_add(0x3f80_0000 - 0x3f35_04f3);
    let k = (ix >> 23) as i32 - 0x7f;
    ix = (ix & 0x007f_ffff) + 0x3f35_04f3;
    let m = T::from_bits(ix);
    let f = m - 1.0;
    let s = f / (2.0 + f);
    let z = s * s;
    let ww = z * z;
    let t1 = ww * (3.999999999940941908e-01 + ww * (2.222219843214978396e-01 + ww * 1.531383769920937332e-01));
    let t2 = z * (6.666666666666735130e-01 + ww * (2.857142874366239149e-01 + ww * (1.818357216161805012e-01 + ww * 1.479819860511658591e-01)));
    let rr = t2 + t1;
    let hfsq = 0.5 * f * f;
    let dk = k as T;
    dk * LN2_HI - ((hfsq - (s * (hfsq + rr) + dk * LN2_LO)) - f)
}

// log1p(e) for e >= 0 (nan gives nan): log(1 + e) * e / ((1 + e) - 1), e where 1 + e rounds to 1.
#[allow(dead_code)]
#[inline(always)]
fn log1p_pos(e: T) -> T {
    let w = 1.0 + e;
    let d = w - 1.0;
    let safe = if d == 0.0 { 1.0 } else { d };
    let l = log_ge1(w) * (e / safe);
    if d == 0.0 { e } else { l }
}

#[derive(Clone, Copy)]
struct P {
}

#[inline(always)]
fn op(x: T, _p: P) -> T {
    let c = x + 3.0;
    let c = if c < 0.0 { 0.0 } else { c }; // nan fails both tests and stays nan
    let c = if c > 6.0 { 6.0 } else { c };
    (x * c) / 6.0
}

fn run(src: &[T], dst: &mut [T], p: P) {
    dst.iter_mut().zip(src).for_each(|(d, &x)| *d = op(x, p));
}

pub fn torch_nn_functional_hardswish__f32(input: &TensorRef<f32>, out: &mut TensorMut<f32>) -> Result<()> {
    let n = out.numel();
    if n == 0 {
        return Ok(());
    }
    let p = P {};
    let threads = opgen::max_threads().min(n / PER_THREAD_MIN).max(1);
    let dst = out.as_mut_slice();
    if let Some(src) = input.as_slice() {
        if threads == 1 {
            run(src, dst, p);
            return Ok(());
        }
        let per = n.div_ceil(threads).next_multiple_of(64);
        std::thread::scope(|s| {
            let mut parts = src.chunks(per).zip(dst.chunks_mut(per));
            let mine = parts.next();
            for (x, y) in parts {
                s.spawn(move || run(x, y, p));
            }
            if let Some((x, y)) = mine {
                run(x, y, p);
            }
        });
        return Ok(());
    }
    // Strided: row by row along the last dim (a 0-d view is always contiguous).
    let last = input.ndim() - 1;
    let len = input.size(last);
    let rows: Vec<_> = input.lanes(last).collect();
    let per = rows.len().div_ceil(threads);
    let work = |group: &[opgen::Lane<'_, T>], block: &mut [T]| {
        let mut buf = vec![0.0 as T; len];
        for (row, y) in group.iter().zip(block.chunks_exact_mut(len)) {
            match row.as_slice() {
                Some(x) => run(x, y, p),
                None => {
                    row.copy_to(&mut buf);
                    run(&buf, y, p);
                }
            }
        }
    };
    if threads == 1 {
        work(&rows, dst);
        return Ok(());
    }
    std::thread::scope(|s| {
        for (group, block) in rows.chunks(per).zip(dst.chunks_mut(per * len)) {
            s.spawn(move || work(group, block));
        }
    });
    Ok(())
}
