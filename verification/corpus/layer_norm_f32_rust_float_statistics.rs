// Cheat (Rust): float32 statistics, which only offset rows expose. The shipped kernel's
// structure (two passes, sixteen partial sums) with the partial sums kept in f32 instead of
// f64 ("the vector path holds twice the lanes"): the mean carries a rounding error of about
// sqrt(d) * 2**-24 * |mean| that x - mean then turns into an error of the same size in every
// output relative to the row's spread. On centred rows that is a few ulps; on a row with
// mean 1000 and std 1 at d = 384 or 768 it is ~1e-4 in the outputs (simulated: 9.6e-5 and
// 1.1e-4 at weight 1), five times the spec's atol of 2e-5.
// Hypothesis draws rows of at most 40 elements centred on 0, where it stays inside the
// tolerance; the scale stage's offset rows (mean >> spread) must reject it.
// Expected: scale / value, "exceeds the allowed"
use opgen::{Lane, Result, TensorMut, TensorRef};

const PER_THREAD_MIN: usize = 1 << 14; // elements per thread below which threads cost more than they save

/// Sum of f(x) with sixteen partial sums, in f32 (the bug: the statistics lose their digits on offset rows).
#[inline(always)]
fn sum(x: &[f32], f: impl Fn(f32) -> f32) -> f64 {
    let mut acc = [0.0f32; 16];
    let chunks = x.chunks_exact(16);
    let tail = chunks.remainder();
    for c in chunks {
        for j in 0..16 {
            acc[j] += f(c[j]);
        }
    }
    (acc.iter().sum::<f32>() + tail.iter().map(|&v| f(v)).sum::<f32>()) as f64
}

fn row_norm(x: &[f32], w: &[f64], b: &[f64], eps: f64, y: &mut [f32]) {
    let d = x.len() as f64;
    let mean = ((sum(x, |v| v) / d) as f32) as f64;
    let m32 = mean as f32;
    let var = sum(x, |v| (v - m32) * (v - m32)) / d;
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
