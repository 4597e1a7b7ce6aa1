// opgen.nn.gemma_rms_norm, overload f32: Gemma 3's RMSNorm over the last dim,
// out = x * rsqrt(mean(x**2) + eps) * (1 + weight).
//
// The mean square is summed in double (no overflow for float32 inputs up to 1e15, within an
// ulp of exact) and every output formed in double, rounded once to float32. The scale is
// 1 + weight (Gemma stores weights around 0). A nan in a row makes it nan; an inf makes the
// mean square inf and the scale 0, so finite entries become 0 and the inf nan (inf * 0), as
// in the reference. weight arrives as a (*loop, d) view with the loop dims at stride 0. x
// may be strided (rows gathered into a buffer); out is contiguous. Large tensors are split
// by rows over scoped threads.
use opgen::{Lane, Result, TensorMut, TensorRef};

const PER_THREAD_MIN: usize = 1 << 14; // elements per thread below which threads cost more than they save

fn row_norm(x: &[f32], scale: &[f64], eps: f64, y: &mut [f32]) {
    let mut acc = [0.0f64; 4];
    let chunks = x.chunks_exact(4);
    let tail = chunks.remainder();
    for c in chunks {
        for j in 0..4 {
            acc[j] += c[j] as f64 * c[j] as f64;
        }
    }
    let sum = (acc[0] + acc[1]) + (acc[2] + acc[3]) + tail.iter().map(|&v| v as f64 * v as f64).sum::<f64>();
    let r = 1.0 / (sum / x.len() as f64 + eps).sqrt();
    for ((o, &v), &w1) in y.iter_mut().zip(x).zip(scale) {
        *o = (v as f64 * r * w1) as f32;
    }
}

fn rows_norm(rows: &[Lane<f32>], scale: &[f64], eps: f64, out: &mut [f32]) {
    let d = scale.len();
    let mut buf = vec![0.0f32; d];
    for (row, y) in rows.iter().zip(out.chunks_exact_mut(d)) {
        match row.as_slice() {
            Some(x) => row_norm(x, scale, eps, y),
            None => {
                row.copy_to(&mut buf);
                row_norm(&buf, scale, eps, y);
            }
        }
    }
}

pub fn opgen_nn_gemma_rms_norm__f32(x: &TensorRef<f32>, weight: &TensorRef<f32>, eps: f64, out: &mut TensorMut<f32>) -> Result<()> {
    let n = out.numel();
    if n == 0 {
        return Ok(());
    }
    let last = x.ndim() - 1;
    let d = x.size(last);
    let wl = weight.ndim() - 1;
    // 1 + weight, computed once (in double: exact for float32 weights).
    let scale: Vec<f64> = weight.lane(wl, &vec![0; wl]).iter().map(|w| 1.0 + w as f64).collect();
    let rows: Vec<Lane<f32>> = x.lanes(last).collect();
    let threads = opgen::max_threads().min(n / PER_THREAD_MIN).max(1);
    let per = rows.len().div_ceil(threads);
    let dst = out.as_mut_slice();
    let scale = &scale;
    std::thread::scope(|s| {
        let mut parts = rows.chunks(per).zip(dst.chunks_mut(per * d));
        let mine = parts.next();
        for (group, block) in parts {
            s.spawn(move || rows_norm(group, scale, eps, block));
        }
        if let Some((group, block)) = mine {
            rows_norm(group, scale, eps, block);
        }
    });
    Ok(())
}
