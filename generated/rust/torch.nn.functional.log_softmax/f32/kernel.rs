// torch.nn.functional.log_softmax, overload f32: log-softmax of a float32 tensor along `dim`.
//
// Each lane along `dim` is computed as PyTorch defines it: m = max(lane),
// s = sum(exp(x - m)), out = (x - m) - log(s). Never log(softmax): very negative entries keep
// their finite value. exp runs in float32, branch-free (x = k*ln2 + r, |r| <= ln2/2, a
// degree-7 polynomial for exp(r), 2**k in the exponent bits: ~1 ulp), so LLVM vectorises it;
// the exps are summed in 16 float lanes over blocks of 1024 elements and the blocks in double
// (relative error ~64 * 6e-8 = 4e-6 at most, an absolute error of that size in log(s));
// log(s) in float, of the double sum rounded to float (u/2 and an ulp of L, below u * |out|).
// The last pass, (x - m) - L, is two float32 roundings, each at most half an
// ulp of |out|. Where x - m < -87.3 exp is taken as 0 (far below an ulp of the sum, which is
// >= 1); -inf entries give -inf.
// Special lanes follow PyTorch: a nan anywhere, a +inf (inf - inf), or all -inf make the
// whole lane nan. A lane of one element gives 0. `dim` may be negative; x may be strided
// (lanes that are not contiguous are gathered into a buffer), 0-d or empty; `out` is
// contiguous with x's shape. Large tensors are split by lanes over scoped threads.
use opgen::{Error, Lane, LaneMut, Result, TensorMut, TensorRef};

type T = f32;
const W: usize = 16; // lanes of the vector loops
const BLOCK: usize = 64 * W; // elements summed in float before they go into the double sums
const MIN_PER_THREAD: usize = 1 << 15; // elements; fewer are not worth a thread

// exp(d) for d <= 0 (or -inf); 0 below -87.3.
#[inline(always)]
fn exp_neg(d: f32) -> f32 {
    let tiny = d < -87.3;
    let d = if tiny { -87.3f32 } else { d };
    let kd = d * std::f32::consts::LOG2_E + 12582912.0; // 1.5 * 2**23: round(d / ln2) in the low bits
    let kbits = kd.to_bits();
    let k = kd - 12582912.0;
    let r = (d - k * f32::from_bits(0x3f317200)) - k * f32::from_bits(0x35bfbe8e); // ln2 split hi/lo
    let mut p = 1.0f32 / 5040.0;
    p = p * r + 1.0 / 720.0;
    p = p * r + 1.0 / 120.0;
    p = p * r + 1.0 / 24.0;
    p = p * r + 1.0 / 6.0;
    p = p * r + 0.5;
    p = p * r + 1.0;
    p = p * r + 1.0;
    let e = p * f32::from_bits(kbits.wrapping_add(127) << 23);
    if tiny { 0.0 } else { e }
}

/// Largest element and whether any is nan, over sixteen partial maxima.
fn max_nan(v: &[T]) -> (T, bool) {
    let mut acc = [T::NEG_INFINITY; W];
    let mut bad = [false; W];
    let chunks = v.chunks_exact(W);
    let tail = chunks.remainder();
    for c in chunks {
        for j in 0..W {
            bad[j] |= c[j] != c[j];
            acc[j] = if c[j] > acc[j] { c[j] } else { acc[j] };
        }
    }
    let mut w = W / 2;
    while w >= 1 {
        // tree reductions: short rows pay little for them
        for j in 0..w {
            bad[j] |= bad[j + w];
            acc[j] = if acc[j + w] > acc[j] { acc[j + w] } else { acc[j] };
        }
        w /= 2;
    }
    let mut m = acc[0];
    let mut nan = bad[0];
    for &x in tail {
        nan |= x != x;
        m = if x > m { x } else { m };
    }
    (m, nan)
}

/// sum(exp(x - m)) over the lane: float lanes per block, blocks in double.
fn sum_exp(v: &[T], m: T) -> f64 {
    let mut total = [0.0f64; W];
    for block in v.chunks(BLOCK) {
        let mut acc = [0.0f32; W];
        let chunks = block.chunks_exact(W);
        let tail = chunks.remainder();
        for c in chunks {
            for j in 0..W {
                acc[j] += exp_neg(c[j] - m);
            }
        }
        for (j, &x) in tail.iter().enumerate() {
            acc[j] += exp_neg(x - m);
        }
        for j in 0..W {
            total[j] += acc[j] as f64;
        }
    }
    let mut w = W / 2;
    while w >= 1 {
        for j in 0..w {
            total[j] += total[j + w];
        }
        w /= 2;
    }
    total[0]
}

/// One lane: `src` in, `dst` out (both contiguous).
fn log_softmax_run(src: &[T], dst: &mut [T]) {
    let (m, nan) = max_nan(src);
    if nan || m.is_infinite() {
        dst.iter_mut().for_each(|d| *d = T::NAN);
        return;
    }
    let lse = (sum_exp(src, m) as T).ln(); // u/2 and an ulp of L: below u * |out|
    dst.iter_mut().zip(src).for_each(|(d, &x)| *d = (x - m) - lse);
}

fn log_softmax_lanes(lanes: &mut [(Lane<T>, LaneMut<T>)], len: usize) {
    let mut src_buf = vec![0.0 as T; len];
    let mut dst_buf = vec![0.0 as T; len];
    for (x, y) in lanes.iter_mut() {
        let src = match x.as_slice() {
            Some(s) => s,
            None => {
                x.copy_to(&mut src_buf);
                &src_buf
            }
        };
        match y.as_mut_slice() {
            Some(dst) => log_softmax_run(src, dst),
            None => {
                log_softmax_run(src, &mut dst_buf);
                y.copy_from(&dst_buf);
            }
        }
    }
}

pub fn torch_nn_functional_log_softmax__f32(x: &TensorRef<f32>, dim: i64, out: &mut TensorMut<f32>) -> Result<()> {
    let nd = x.ndim() as i64;
    if nd == 0 {
        // A 0-d tensor is one lane of one element (dim must be 0 or -1).
        if dim != 0 && dim != -1 {
            return Err(Error::value("dim out of range"));
        }
        let v = x.item();
        out.fill(if v.is_nan() || v.is_infinite() { T::NAN } else { 0.0 });
        return Ok(());
    }
    if dim < -nd || dim >= nd {
        return Err(Error::value("dim out of range"));
    }
    let ax = (if dim < 0 { dim + nd } else { dim }) as usize;
    let len = x.size(ax);
    if out.is_empty() || len == 0 {
        return Ok(());
    }
    let mut lanes: Vec<(Lane<T>, LaneMut<T>)> = x.lanes(ax).zip(out.lanes_mut(ax)).collect();
    let threads = opgen::max_threads().min(x.numel() / MIN_PER_THREAD).min(lanes.len()).max(1);
    if threads <= 1 {
        log_softmax_lanes(&mut lanes, len);
        return Ok(());
    }
    let per = lanes.len().div_ceil(threads);
    std::thread::scope(|s| {
        for part in lanes.chunks_mut(per) {
            s.spawn(move || log_softmax_lanes(part, len));
        }
    });
    Ok(())
}
