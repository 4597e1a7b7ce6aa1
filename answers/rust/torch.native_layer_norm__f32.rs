// torch.native_layer_norm, overload f32: over the last dim, output = (x - mean) * rstd * weight +
// bias with rstd = 1 / sqrt(var + eps), var the biased variance; mean and rstd of shape (*, 1), one
// per row, each the double statistic rounded once to float32.
//
// torch.nn.functional.layer_norm's shipped kernel (answers/rust/torch.nn.functional.layer_norm__f32.rs),
// which also hands back each row's mean and rstd: the mean is the sum over d (+-inf for a row holding
// infinities of one sign, nan with a nan or both), rstd nan wherever the variance is; a row of
// d == 0 has mean 0 and rstd nan (0/0), as torch.
//
// Mean and variance are taken in double in two passes (sum, then sum of squared deviations:
// no cancellation, so rows of small spread around a large mean keep their digits), and every
// output is formed in double and rounded once to float32. A nan or inf in a row makes the
// variance nan (inf - inf), so the row is all nan, as in PyTorch; a row of one element gives
// bias exactly (x - mean is 0). weight and bias arrive as (*loop, d) views with the loop dims
// at stride 0: their last dim is read once. x may be strided (rows gathered into a buffer);
// out is contiguous. Large tensors are split by rows over scoped threads.
use opgen::{Lane, Result, TensorMut, TensorRef};

const PER_THREAD_MIN: usize = 1 << 14; // elements per thread below which threads cost more than they save

/// Sum of f(x) in double with sixteen partial sums (a float reduction is not vectorised otherwise).
#[inline(always)]
fn sum(x: &[f32], f: impl Fn(f64) -> f64) -> f64 {
    let mut acc = [0.0f64; 16];
    let chunks = x.chunks_exact(16);
    let tail = chunks.remainder();
    for c in chunks {
        for j in 0..16 {
            acc[j] += f(c[j] as f64);
        }
    }
    acc.iter().sum::<f64>() + tail.iter().map(|&v| f(v as f64)).sum::<f64>()
}

fn row_norm(x: &[f32], w: &[f64], b: &[f64], eps: f64, y: &mut [f32], m: &mut f32, r: &mut f32) {
    let d = x.len() as f64;
    let mean = sum(x, |v| v) / d;
    let var = sum(x, |v| (v - mean) * (v - mean)) / d;
    let rstd = 1.0 / (var + eps).sqrt();
    *m = mean as f32;
    *r = rstd as f32;
    for (((o, &v), &wi), &bi) in y.iter_mut().zip(x).zip(w).zip(b) {
        *o = ((v as f64 - mean) * rstd * wi + bi) as f32;
    }
}

fn rows_norm(rows: &[Lane<f32>], w: &[f64], b: &[f64], eps: f64, out: &mut [f32], mean: &mut [f32],
             rstd: &mut [f32]) {
    let d = w.len();
    let mut buf = vec![0.0f32; d];
    for (((row, y), m), r) in rows.iter().zip(out.chunks_exact_mut(d)).zip(mean.iter_mut()).zip(rstd.iter_mut()) {
        match row.as_slice() {
            Some(x) => row_norm(x, w, b, eps, y, m, r),
            None => {
                row.copy_to(&mut buf);
                row_norm(&buf, w, b, eps, y, m, r);
            }
        }
    }
}

/// The last dim of a (*loop, d) view whose loop dims are broadcast (stride 0), in double.
fn vector(v: &TensorRef<f32>) -> Vec<f64> {
    let last = v.ndim() - 1;
    v.lane(last, &vec![0; last]).iter().map(|x| x as f64).collect()
}

pub fn torch_native_layer_norm__f32(
    input: &TensorRef<f32>,
    weight: &TensorRef<f32>,
    bias: &TensorRef<f32>,
    eps: f64,
    output: &mut TensorMut<f32>,
    mean: &mut TensorMut<f32>,
    rstd: &mut TensorMut<f32>,
) -> Result<()> {
    let last = input.ndim() - 1; // the shim guarantees at least the core dim
    let d = input.size(last);
    if d == 0 {
        // torch: the mean of nothing is 0, the variance 0/0
        mean.fill(0.0);
        rstd.fill(f32::NAN);
        return Ok(());
    }
    let n = output.numel();
    if n == 0 {
        return Ok(());
    }
    let (w, b) = (vector(weight), vector(bias));
    let rows: Vec<Lane<f32>> = input.lanes(last).collect();
    let threads = opgen::max_threads().min(n / PER_THREAD_MIN).max(1);
    let per = rows.len().div_ceil(threads);
    let dst = output.as_mut_slice();
    let (means, rstds) = (mean.as_mut_slice(), rstd.as_mut_slice());
    let (w, b) = (&w, &b);
    std::thread::scope(|s| {
        let mut parts = rows.chunks(per).zip(dst.chunks_mut(per * d)).zip(means.chunks_mut(per)).zip(rstds.chunks_mut(per));
        let mine = parts.next();
        for (((group, block), m), r) in parts {
            s.spawn(move || rows_norm(group, w, b, eps, block, m, r));
        }
        if let Some((((group, block), m), r)) = mine {
            rows_norm(group, w, b, eps, block, m, r);
        }
    });
    Ok(())
}
