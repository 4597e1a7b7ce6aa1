// opgen.nn.masked_mean_pool, overload f32: out[b, :] = sum_s hidden[b, s, :] * mask[b, s]
// / max(sum_s mask[b, s], 1e-9), sentence-transformers' mean pooling.
//
// hidden is (*loop, s, d), mask (*loop, s) (the shim has aligned the loop dims, stride 0
// where broadcast), out (*loop, d) contiguous. For every loop index the products are summed
// in double (within an ulp of the exact sum) and divided once, rounded to float32. Masked
// positions are multiplied by 0, not skipped: a nan or inf there still makes its column nan,
// as in the reference. A row with no unmasked token gives 0 (0 / 1e-9); s == 0 gives 0.
// Rows of hidden that are contiguous are added as slices (vectorised); others element by
// element. Loop indices are split over scoped threads when the work is large.
use opgen::{Result, TensorMut, TensorRef};

const PER_THREAD_MIN: usize = 1 << 15; // products per thread below which threads cost more than they save

fn pool(h: TensorRef<f32>, m: TensorRef<i64>, acc: &mut [f64], y: &mut [f32]) {
    let s = h.size(0);
    acc.fill(0.0);
    let mut count = 0.0f64;
    for t in 0..s {
        let w = m.get(&[t]) as f32 as f64; // the mask cast to float32, as the reference does
        count += w;
        let row = h.lane(1, &[t]);
        match row.as_slice() {
            Some(r) => acc.iter_mut().zip(r).for_each(|(a, &v)| *a += v as f64 * w),
            None => acc.iter_mut().zip(row.iter()).for_each(|(a, v)| *a += v as f64 * w),
        }
    }
    let denom = if count < 1e-9 { 1e-9 } else { count };
    for (o, &a) in y.iter_mut().zip(acc.iter()) {
        *o = (a / denom) as f32;
    }
}

pub fn opgen_nn_masked_mean_pool__f32(hidden: &TensorRef<f32>, mask: &TensorRef<i64>, out: &mut TensorMut<f32>) -> Result<()> {
    let nd = out.ndim();
    let d = out.size(nd - 1);
    let batch: usize = out.shape()[..nd - 1].iter().product();
    if batch == 0 || d == 0 {
        return Ok(());
    }
    // The loop indices in row-major order (the order of out's rows).
    let loop_shape = out.shape()[..nd - 1].to_vec();
    let mut index = vec![0usize; nd - 1];
    let mut items = Vec::with_capacity(batch);
    for _ in 0..batch {
        items.push((hidden.sub(&index), mask.sub(&index)));
        for k in (0..nd - 1).rev() {
            index[k] += 1;
            if index[k] < loop_shape[k] {
                break;
            }
            index[k] = 0;
        }
    }
    let work = batch * hidden.size(hidden.ndim() - 2) * d;
    let threads = opgen::max_threads().min(work / PER_THREAD_MIN).max(1).min(batch);
    let per = batch.div_ceil(threads);
    let dst = out.as_mut_slice();
    std::thread::scope(|s| {
        for (group, block) in items.chunks(per).zip(dst.chunks_mut(per * d)) {
            s.spawn(move || {
                let mut acc = vec![0.0f64; d];
                for ((h, m), y) in group.iter().zip(block.chunks_exact_mut(d)) {
                    pool(*h, *m, &mut acc, y);
                }
            });
        }
    });
    Ok(())
}
