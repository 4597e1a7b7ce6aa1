// torch.nn.functional.softmax, overload f32: softmax of a float32 tensor along `dim`.
//
// Each lane along `dim` is computed as PyTorch defines it: m = max(lane),
// out = exp(x - m) / sum(exp(x - m)). exp runs in double precision, branch-free
// (x = k*ln2 + r, a degree-8 polynomial for exp(r), 2**k in the exponent bits), so LLVM
// vectorises it; each exp is rounded to float32, summed in double, and scaled by the
// reciprocal of the sum in float32 (a few ulps in all).
// Special lanes follow PyTorch: a nan anywhere makes the whole lane nan (it reaches the
// sum); a lane that is all -inf is nan (-inf - -inf); a +inf makes the lane nan
// (inf - inf); other -inf entries get probability 0. `dim` may be negative; x may be
// strided (lanes that are not contiguous are gathered into a buffer), 0-d or empty;
// `out` is contiguous with x's shape. Large tensors are split by lanes over scoped threads.
use opgen::{Error, Lane, LaneMut, Result, TensorMut, TensorRef};

type T = f32;
const SHIFT: f64 = 6755399441055744.0; // 1.5 * 2**52
const LOG2E: f64 = std::f64::consts::LOG2_E;
const LN2_HI: f64 = 0.6931471803691238;
const LN2_LO: f64 = 1.9082149292705877e-10;
const MIN_PER_THREAD: usize = 1 << 15; // elements; fewer are not worth a thread

// exp(x) for x <= 0 (or nan), to about 1e-10 relative; below -110 it is tiny enough to
// round to 0 in the float32 result.
#[inline(always)]
fn exp_neg(x: f64) -> f64 {
    let x = if x < -110.0 { -110.0 } else { x };
    let kd = x.mul_add(LOG2E, SHIFT);
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

/// Largest element, with sixteen partial maxima (a float reduction is not vectorised otherwise).
/// nan is skipped here; it still reaches the sum and makes the lane nan.
fn max(v: &[T]) -> T {
    let mut acc = [T::NEG_INFINITY; 16];
    let chunks = v.chunks_exact(16);
    let tail = chunks.remainder();
    for c in chunks {
        for j in 0..16 {
            acc[j] = if c[j] > acc[j] { c[j] } else { acc[j] };
        }
    }
    acc.iter().chain(tail).fold(T::NEG_INFINITY, |m, &x| if x > m { x } else { m })
}

/// Sum in double with sixteen partial sums.
fn sum(v: &[T]) -> f64 {
    let mut acc = [0.0f64; 16];
    let chunks = v.chunks_exact(16);
    let tail = chunks.remainder();
    for c in chunks {
        for j in 0..16 {
            acc[j] += c[j] as f64;
        }
    }
    acc.iter().sum::<f64>() + tail.iter().map(|&x| x as f64).sum::<f64>()
}

/// One lane: `src` in, `dst` out (both contiguous). Three plain passes LLVM vectorises:
/// exp(x - m) into dst (rounded to float32, 2**-24 relative), its sum, the scaling.
fn softmax_run(src: &[T], dst: &mut [T]) {
    let m = max(src) as f64;
    dst.iter_mut().zip(src).for_each(|(d, &x)| *d = exp_neg(x as f64 - m) as T);
    let inv = (1.0 / sum(dst)) as T;
    dst.iter_mut().for_each(|d| *d *= inv);
}

fn softmax_lanes(lanes: &mut [(Lane<T>, LaneMut<T>)], len: usize) {
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
            Some(dst) => softmax_run(src, dst),
            None => {
                softmax_run(src, &mut dst_buf);
                y.copy_from(&dst_buf);
            }
        }
    }
}

pub fn torch_nn_functional_softmax__f32(x: &TensorRef<f32>, dim: i64, out: &mut TensorMut<f32>) -> Result<()> {
    let nd = x.ndim() as i64;
    if nd == 0 {
        // A 0-d tensor is one lane of one element (dim must be 0 or -1).
        if dim != 0 && dim != -1 {
            return Err(Error::value("dim out of range"));
        }
        let v = x.item();
        out.fill(if v.is_nan() || v == T::INFINITY || v == T::NEG_INFINITY { T::NAN } else { 1.0 });
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
    let threads = opgen::max_threads().min(x.numel() / MIN_PER_THREAD).max(1);
    if threads <= 1 {
        softmax_lanes(&mut lanes, len);
        return Ok(());
    }
    let per = lanes.len().div_ceil(threads);
    std::thread::scope(|s| {
        for part in lanes.chunks_mut(per) {
            s.spawn(move || softmax_lanes(part, len));
        }
    });
    Ok(())
}
