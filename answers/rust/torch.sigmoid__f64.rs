// torch.sigmoid, overload f64: out[i] = 1 / (1 + exp(-x[i])), in float64.
//
// The formula PyTorch evaluates, with a branchless double exp that LLVM vectorises:
//   - exp(t), t = -x clamped to [-40, 710], by range reduction t = n ln2 + r (|r| <= ln2/2,
//     ln2 in two parts; n found by adding 1.5 * 2^52, which leaves it in the low mantissa
//     bits), exp(r) by its degree-13 Taylor polynomial (truncation below 5e-18 relative), and
//     2^n applied exactly as two powers of two built in the exponent bits (n in [-58, 1025]
//     needs two): exp overflows to inf above ~709.78;
//   - then one addition and one correctly rounded division, so the result is within about
//     2 ulps of the logistic function for every x (1 + e has no cancellation: e > 0).
// Edges, as in PyTorch: for x below about -709.78, exp(-x) overflows to inf and the result is
// +0.0 (the true value is a subnormal there, <= 5.6e-309). Below t = -40, exp(t) < 2^-57
// cannot move 1 + e off 1. nan fails both clamps, stays nan and gives nan; +inf gives 1,
// -inf gives 0, -0.0 gives 0.5.
//
// `out` is contiguous with input's shape; input may be strided (rows along the last dim are
// gathered into a buffer when they are not contiguous). Large tensors are split over scoped
// threads, at most opgen::max_threads() of them.
use opgen::{Result, TensorMut, TensorRef};

type T = f64;
// Elements per thread below which one thread is faster: a scoped thread is spawned per call,
// and on the shared two-core machine this was tuned on that saved nothing below ~2M elements.
const PER_THREAD_MIN: usize = 1 << 20;
const SHIFT: f64 = 6755399441055744.0; // 1.5 * 2^52
const SHIFT_BITS: i64 = 0x4338_0000_0000_0000; // its bit pattern: bits(t * log2e + SHIFT) - SHIFT_BITS = n
const LN2_HI: f64 = 0.6931471803691238; // ln2 in two parts (fdlibm's)
const LN2_LO: f64 = 1.9082149292705877e-10;

#[inline(always)]
fn pow2(e: i64) -> f64 {
    // 2^e for e in [-1022, 1023]
    f64::from_bits((e.wrapping_add(1023) as u64) << 52)
}

#[inline(always)]
fn exp(t: f64) -> f64 {
    let t = if t > 710.0 { 710.0 } else { t };
    let t = if t < -40.0 { -40.0 } else { t }; // nan compares false and passes both clamps
    let kd = t.mul_add(std::f64::consts::LOG2_E, SHIFT);
    let n = kd - SHIFT;
    let k = (kd.to_bits() as i64).wrapping_sub(SHIFT_BITS); // n as an integer (garbage for nan, whose p is nan)
    let r = n.mul_add(-LN2_HI, t);
    let r = n.mul_add(-LN2_LO, r);
    let mut p: f64 = 1.0 / 6227020800.0; // 1/13!
    p = p.mul_add(r, 1.0 / 479001600.0);
    p = p.mul_add(r, 1.0 / 39916800.0);
    p = p.mul_add(r, 1.0 / 3628800.0);
    p = p.mul_add(r, 1.0 / 362880.0);
    p = p.mul_add(r, 1.0 / 40320.0);
    p = p.mul_add(r, 1.0 / 5040.0);
    p = p.mul_add(r, 1.0 / 720.0);
    p = p.mul_add(r, 1.0 / 120.0);
    p = p.mul_add(r, 1.0 / 24.0);
    p = p.mul_add(r, 1.0 / 6.0);
    p = p.mul_add(r, 0.5);
    p = p.mul_add(r * r, r) + 1.0;
    let k1 = k >> 1;
    p * pow2(k1) * pow2(k.wrapping_sub(k1))
}

#[inline(always)]
fn op(x: T) -> T {
    1.0 / (1.0 + exp(-x))
}

fn run(src: &[T], dst: &mut [T]) {
    dst.iter_mut().zip(src).for_each(|(d, &x)| *d = op(x));
}

pub fn torch_sigmoid__f64(input: &TensorRef<f64>, out: &mut TensorMut<f64>) -> Result<()> {
    let n = out.numel();
    if n == 0 {
        return Ok(());
    }
    let threads = opgen::max_threads().min(n / PER_THREAD_MIN).max(1);
    let dst = out.as_mut_slice();
    if let Some(src) = input.as_slice() {
        if threads == 1 {
            run(src, dst);
            return Ok(());
        }
        let per = n.div_ceil(threads).next_multiple_of(64);
        std::thread::scope(|s| {
            let mut parts = src.chunks(per).zip(dst.chunks_mut(per));
            let mine = parts.next();
            for (x, y) in parts {
                s.spawn(move || run(x, y));
            }
            if let Some((x, y)) = mine {
                run(x, y);
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
                Some(x) => run(x, y),
                None => {
                    row.copy_to(&mut buf);
                    run(&buf, y);
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
