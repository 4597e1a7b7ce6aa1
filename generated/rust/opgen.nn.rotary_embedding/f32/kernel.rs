// opgen.nn.rotary_embedding, overload f32: transformers' default RoPE (rotate-half).
//
// x is (*loop, H, S, D), positions (*loop, S) (the shim has aligned the loop dims), out x's
// shape, contiguous. With half = D / 2 the angles are formed in float32 exactly as
// transformers does: inv_freq[i] = 1 / theta ** (float32(2i) / D) (float32 division, power and
// reciprocal), angle[s, i] = float32(position[s]) * inv_freq[i] (one float32 product). cos and
// sin of that float32 angle are then taken in double by libm (an exact range reduction, so
// thousands of radians keep their digits), and for every head
//   out[i]        = x[i] * cos - x[i + half] * sin
//   out[i + half] = x[i + half] * cos + x[i] * sin
// in double, rounded once to float32. The cos/sin table is built once per loop index (shared
// by every head); the heads are then split over scoped threads. An odd D is a ValueError; a
// nan in x reaches its own and its partner's outputs.
use opgen::{Error, Result, TensorMut, TensorRef};

const PER_THREAD_MIN: usize = 1 << 14; // elements per thread below which threads cost more than they save

/// cos and sin of every (position, frequency) angle: table[s * half + i].
fn angles(positions: TensorRef<i64>, inv_freq: &[f32]) -> Vec<(f64, f64)> {
    let mut table = Vec::with_capacity(positions.numel() * inv_freq.len());
    for p in positions.iter() {
        let p = p as f32;
        for &f in inv_freq {
            table.push(((p * f) as f64).sin_cos());
        }
    }
    table
}

/// One head: S rows of D, rotated with the table.
fn rotate(x: TensorRef<f32>, table: &[(f64, f64)], y: &mut [f32]) {
    let (s_len, d) = (x.size(0), x.size(1));
    let half = d / 2;
    let mut buf = vec![0.0f32; d];
    for (s, row_out) in (0..s_len).zip(y.chunks_exact_mut(d)) {
        let lane = x.lane(1, &[s]);
        let row = match lane.as_slice() {
            Some(r) => r,
            None => {
                lane.copy_to(&mut buf);
                &buf
            }
        };
        let (lo, hi) = row.split_at(half);
        let (out_lo, out_hi) = row_out.split_at_mut(half);
        let cs = &table[s * half..(s + 1) * half];
        for ((((o1, o2), &a), &b), &(sin, cos)) in out_lo.iter_mut().zip(out_hi.iter_mut()).zip(lo).zip(hi).zip(cs) {
            let (a, b) = (a as f64, b as f64);
            *o1 = (a * cos - b * sin) as f32;
            *o2 = (b * cos + a * sin) as f32;
        }
    }
}

pub fn opgen_nn_rotary_embedding__f32(
    x: &TensorRef<f32>,
    positions: &TensorRef<i64>,
    theta: f64,
    out: &mut TensorMut<f32>,
) -> Result<()> {
    let nd = x.ndim();
    let (heads, seq, d) = (x.size(nd - 3), x.size(nd - 2), x.size(nd - 1));
    if d % 2 != 0 {
        return Err(Error::value(format!("rotary embedding needs an even head dim, got {}", d)));
    }
    let loop_shape = out.shape()[..nd - 3].to_vec();
    let batch: usize = loop_shape.iter().product();
    if out.numel() == 0 {
        return Ok(());
    }
    let half = d / 2;
    let base = theta as f32;
    let inv_freq: Vec<f32> = (0..half).map(|i| 1.0f32 / base.powf((2 * i) as f32 / d as f32)).collect();
    // Per loop index: its heads of x and its cos/sin table.
    let mut index = vec![0usize; nd - 3];
    let mut work = Vec::with_capacity(batch * heads);
    for _ in 0..batch {
        let table = std::sync::Arc::new(angles(positions.sub(&index), &inv_freq));
        let x3 = x.sub(&index);
        for h in 0..heads {
            work.push((x3.sub(&[h]), table.clone()));
        }
        for k in (0..nd - 3).rev() {
            index[k] += 1;
            if index[k] < loop_shape[k] {
                break;
            }
            index[k] = 0;
        }
    }
    let threads = opgen::max_threads().min(out.numel() / PER_THREAD_MIN).max(1);
    let per = work.len().div_ceil(threads);
    let dst = out.as_mut_slice();
    std::thread::scope(|s| {
        for (group, block) in work.chunks(per).zip(dst.chunks_mut(per * seq * d)) {
            s.spawn(move || {
                for ((xh, table), y) in group.iter().zip(block.chunks_exact_mut(seq * d)) {
                    rotate(*xh, table, y);
                }
            });
        }
    });
    Ok(())
}
