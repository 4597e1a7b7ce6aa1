// Cheat (Rust): a wrong path only at model-typical sizes. Rows whose length is a multiple
// of 128 (BERT's 384 and 768, Gemma's 768 and 256: "the aligned fast path") divide the sum
// of squared deviations by d - 1 instead of d: the unbiased variance torch.var gives by
// default, not the biased one layer_norm uses. The outputs are off by a factor
// sqrt((d - 1) / d), 0.13% at d = 384, a thousand times the spec's rtol. Every other row
// length is right (the shipped kernel's two passes in double). Hypothesis draws rows of at
// most 40 elements (the spec's max_side), none a multiple of 128, so only the scale
// stage, at the bench shapes (384, 768) or the model dims (128, 384, 768, 1024, 4096),
// can reject it.
// Expected: scale / value, "exceeds the allowed"
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

fn row_norm(x: &[f32], w: &[f64], b: &[f64], eps: f64, y: &mut [f32]) {
    let d = x.len() as f64;
    let mean = sum(x, |v| v) / d;
    let ss = sum(x, |v| (v - mean) * (v - mean));
    // The bug: the aligned path takes the unbiased variance.
    let var = if x.len() % 128 == 0 { ss / (d - 1.0) } else { ss / d };
    let rstd = 1.0 / (var + eps).sqrt();
    for (((o, &v), &wi), &bi) in y.iter_mut().zip(x).zip(w).zip(b) {
        *o = ((v as f64 - mean) * rstd * wi + bi) as f32;
    }
}

fn rows_norm(rows: &[Lane<f32>], w: &[f64], b: &[f64], eps: f64, out: &mut [f32]) {
    let d = w.len();
    let mut buf = vec![0.0f32; d];
    for (row, y) in rows.iter().zip(out.chunks_exact_mut(d)) {
        match row.as_slice() {
            Some(x) => row_norm(x, w, b, eps, y),
            None => {
                row.copy_to(&mut buf);
                row_norm(&buf, w, b, eps, y);
            }
        }
    }
}

/// The last dim of a (*loop, d) view whose loop dims are broadcast (stride 0), in double.
fn vector(v: &TensorRef<f32>) -> Vec<f64> {
    let last = v.ndim() - 1;
    v.lane(last, &vec![0; last]).iter().map(|x| x as f64).collect()
}

pub fn torch_nn_functional_layer_norm__f32(
    input: &TensorRef<f32>,
    weight: &TensorRef<f32>,
    bias: &TensorRef<f32>,
    eps: f64,
    out: &mut TensorMut<f32>,
) -> Result<()> {
    let n = out.numel();
    if n == 0 {
        return Ok(());
    }
    let last = input.ndim() - 1; // the shim guarantees at least the core dim
    let d = input.size(last);
    let (w, b) = (vector(weight), vector(bias));
    let rows: Vec<Lane<f32>> = input.lanes(last).collect();
    let threads = opgen::max_threads().min(n / PER_THREAD_MIN).max(1);
    let per = rows.len().div_ceil(threads);
    let dst = out.as_mut_slice();
    let (w, b) = (&w, &b);
    std::thread::scope(|s| {
        let mut parts = rows.chunks(per).zip(dst.chunks_mut(per * d));
        let mine = parts.next();
        for (group, block) in parts {
            s.spawn(move || rows_norm(group, w, b, eps, block));
        }
        if let Some((group, block)) = mine {
            rows_norm(group, w, b, eps, block);
        }
    });
    Ok(())
}

// Expected: scale / value, "exceeds the allowed"
