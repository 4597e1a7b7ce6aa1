// torch.nn.functional.log_softmax, overload f64: log-softmax of a float64 tensor along `dim`.
//
// Each lane along `dim` is computed as PyTorch defines it: m = max(lane),
// s = sum(exp(x - m)), out = (x - m) - log(s). Never log(softmax): very negative entries keep
// their finite value. exp is branch-free (x = k*ln2 + r, |r| <= ln2/2, a degree-13 Taylor
// polynomial for exp(r), 2**k in the exponent bits: about 1 ulp), so LLVM vectorises it; the
// exps are summed in 16 double lanes; log(s) by f64::ln. The last pass, (x - m) - L, is two
// roundings, each at most half an ulp of |out|. Where x - m < -708 exp is taken as 0 (far
// below an ulp of the sum, which is >= 1); -inf entries give -inf.
// Special lanes follow PyTorch: a nan anywhere, a +inf (inf - inf), or all -inf make the
// whole lane nan. A lane of one element gives 0. `dim` may be negative; x may be strided
// (lanes that are not contiguous are gathered into a buffer), 0-d or empty; `out` is
// contiguous with x's shape. Large tensors are split by lanes over scoped threads.
use opgen::{Error, Lane, LaneMut, Result, TensorMut, TensorRef};

type T = f64;
const W: usize = 16; // lanes of the vector loops
const MIN_PER_THREAD: usize = 1 << 15; // elements; fewer are not worth a thread

// exp(d) for d <= 0 (or -inf); 0 below -708.
#[inline(always)]
fn exp_neg(d: f64) -> f64 {
    let tiny = d < -708.0;
    let d = if tiny { -708.0 } else { d };
    let kd = d * std::f64::consts::LOG2_E + 6755399441055744.0; // 1.5 * 2**52
    let kbits = kd.to_bits();
    let k = kd - 6755399441055744.0;
    let r = (d - k * f64::from_bits(0x3fe62e42fefa0000)) - k * f64::from_bits(0x3d7cf79abc9e3b3a);
    let mut p = 1.0f64 / 6227020800.0;
    p = p * r + 1.0 / 479001600.0;
    p = p * r + 1.0 / 39916800.0;
    p = p * r + 1.0 / 3628800.0;
    p = p * r + 1.0 / 362880.0;
    p = p * r + 1.0 / 40320.0;
    p = p * r + 1.0 / 5040.0;
    p = p * r + 1.0 / 720.0;
    p = p * r + 1.0 / 120.0;
    p = p * r + 1.0 / 24.0;
    p = p * r + 1.0 / 6.0;
    p = p * r + 0.5;
    p = p * r + 1.0;
    p = p * r + 1.0;
    let e = p * f64::from_bits(kbits.wrapping_add(1023) << 52);
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

/// sum(exp(x - m)) over the lane, in sixteen partial sums.
fn sum_exp(v: &[T], m: T) -> f64 {
    let mut acc = [0.0f64; W];
    let chunks = v.chunks_exact(W);
    let tail = chunks.remainder();
    for c in chunks {
        for j in 0..W {
            acc[j] += exp_neg(c[j] - m);
        }
    }
    for (j, &x) in tail.iter().enumerate() {
        acc[j] += exp_neg(x - m);
    }
    let mut w = W / 2;
    while w >= 1 {
        for j in 0..w {
            acc[j] += acc[j + w];
        }
        w /= 2;
    }
    acc[0]
}

/// One lane: `src` in, `dst` out (both contiguous).
fn log_softmax_run(src: &[T], dst: &mut [T]) {
    let (m, nan) = max_nan(src);
    if nan || m.is_infinite() {
        dst.iter_mut().for_each(|d| *d = T::NAN);
        return;
    }
    let lse = sum_exp(src, m).ln();
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

pub fn torch_nn_functional_log_softmax__f64(x: &TensorRef<f64>, dim: i64, out: &mut TensorMut<f64>) -> Result<()> {
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
