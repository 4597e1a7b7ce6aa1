// torch.nn.functional.silu, overload f32: out[i] = x / (1 + exp(-x)) for x = input[i], in float32.
//
// The formula PyTorch evaluates (x * sigmoid(x) with one rounding fewer), with a branchless
// float32 exp that LLVM vectorises:
//   - exp(t), t = -x clamped to [-88, 100], by a Cephes-style range reduction (t = n ln2 + r,
//     |r| <= ln2/2, ln2 in two parts so n ln2 is exact; n found by adding 1.5 * 2^23, which
//     leaves it in the low mantissa bits), the degree-6 minimax polynomial of Cephes' expf
//     (within about 1 ulp), and 2^n applied exactly as two powers of two built in the
//     exponent bits (n in [-127, 145] needs two): exp overflows to inf above ~88.72;
//   - then one addition and one correctly rounded division of x, so the result is within
//     about 2 ulps of x * sigmoid(x) for every x (1 + e has no cancellation: e > 0).
// Edges, as in PyTorch: for x below about -88.72, exp(-x) overflows to inf and the result is
// x / inf = -0.0 (the true value there is at most 2.6e-37 in magnitude); -inf gives
// -inf / inf = nan, +inf gives +inf, -0.0 gives -0.0, subnormal x give x / 2 (no flush).
// Below t = -88, exp(t) < 2^-126 cannot move 1 + e off 1. nan fails both clamps and gives nan.
//
// `out` is contiguous with input's shape; input may be strided (rows along the last dim are
// gathered into a buffer when they are not contiguous). Large tensors are split over scoped
// threads, at most opgen::max_threads() of them.
use opgen::{Result, TensorMut, TensorRef};

type T = f32;
// Elements per thread below which one thread is faster: a scoped thread is spawned per call,
// and on the shared two-core machine this was tuned on that saved nothing below ~2M elements.
const PER_THREAD_MIN: usize = 1 << 20;
const MAGIC: f32 = 12582912.0; // 1.5 * 2^23
const MAGIC_BITS: i32 = 0x4B40_0000; // its bit pattern: bits(t * log2e + MAGIC) - MAGIC_BITS = n

#[inline(always)]
fn pow2(e: i32) -> f32 {
    // 2^e for e in [-126, 127]
    f32::from_bits((e.wrapping_add(127) as u32) << 23)
}

#[inline(always)]
fn exp(t: f32) -> f32 {
    let t = if t > 100.0 { 100.0 } else { t };
    let t = if t < -88.0 { -88.0 } else { t }; // nan compares false and passes both clamps
    let kd = t.mul_add(std::f32::consts::LOG2_E, MAGIC);
    let n = kd - MAGIC;
    let e = (kd.to_bits() as i32).wrapping_sub(MAGIC_BITS); // n as an integer (garbage for nan, whose p is nan)
    let r = n.mul_add(-0.693359375, t);
    let r = n.mul_add(2.12194440e-4, r);
    let mut p: f32 = 1.9875691500e-4;
    p = p.mul_add(r, 1.3981999507e-3);
    p = p.mul_add(r, 8.3334519073e-3);
    p = p.mul_add(r, 4.1665795894e-2);
    p = p.mul_add(r, 1.6666665459e-1);
    p = p.mul_add(r, 5.0000001201e-1);
    p = p.mul_add(r * r, r) + 1.0;
    let e1 = e >> 1;
    p * pow2(e1) * pow2(e.wrapping_sub(e1))
}

#[inline(always)]
fn op(x: T) -> T {
    x / (1.0 + exp(-x))
}

fn run(src: &[T], dst: &mut [T]) {
    dst.iter_mut().zip(src).for_each(|(d, &x)| *d = op(x));
}

pub fn torch_nn_functional_silu__f32(input: &TensorRef<f32>, out: &mut TensorMut<f32>) -> Result<()> {
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
