// numpy.where, overload i32: out = condition ? x : y elementwise, NumPy broadcasting, int32.
//
// The shim has already broadcast condition, x and y to out's shape (stride 0 along broadcast
// dims), so every element is out[i...] = if condition[i...] { x[i...] } else { y[i...] }: a
// copy of one input element (bits and all: -0.0, nan payloads and subnormals are kept).
//
// Speed: all three contiguous is one slice loop (a branch-free select LLVM vectorises);
// otherwise rows along the last dim, with the common row shapes (unit-stride rows, a 0-d fill
// value or a broadcast condition, stride 0) as slice loops. Large outputs are split over scoped
// threads: contiguous runs into equal ranges, rows into equal groups.
use opgen::{Lane, Result, TensorMut, TensorRef};

type T = i32;
// Elements per thread below which a thread costs more than it saves (a scoped thread is spawned
// and joined per call, some tens of microseconds; the loop itself is memory-bound).
const PER_THREAD_MIN: usize = 1 << 17;

fn run_slices(c: &[bool], x: &[T], y: &[T], d: &mut [T]) {
    for (((o, &k), &p), &q) in d.iter_mut().zip(c).zip(x).zip(y) {
        *o = if k { p } else { q };
    }
}

fn run_row(c: Lane<bool>, x: Lane<T>, y: Lane<T>, d: &mut [T]) {
    match (c.as_slice(), x.as_slice(), y.as_slice()) {
        (Some(c), Some(x), Some(y)) => run_slices(c, x, y, d),
        (Some(c), Some(x), None) if y.stride() == 0 => {
            let q = y.get(0);
            for ((o, &k), &p) in d.iter_mut().zip(c).zip(x) {
                *o = if k { p } else { q };
            }
        }
        (Some(c), None, Some(y)) if x.stride() == 0 => {
            let p = x.get(0);
            for ((o, &k), &q) in d.iter_mut().zip(c).zip(y) {
                *o = if k { p } else { q };
            }
        }
        (None, Some(x), Some(y)) if c.stride() == 0 => {
            d.copy_from_slice(if c.get(0) { x } else { y });
        }
        _ => {
            for (o, ((k, p), q)) in d.iter_mut().zip(c.iter().zip(x.iter()).zip(y.iter())) {
                *o = if k { p } else { q };
            }
        }
    }
}

pub fn numpy_where__i32(condition: &TensorRef<bool>, x: &TensorRef<i32>, y: &TensorRef<i32>, out: &mut TensorMut<i32>) -> Result<()> {
    let n = out.numel();
    if n == 0 {
        return Ok(());
    }
    let threads = opgen::max_threads().min(n / PER_THREAD_MIN).max(1);
    let dst = out.as_mut_slice();
    if let (Some(c), Some(p), Some(q)) = (condition.as_slice(), x.as_slice(), y.as_slice()) {
        let per = n.div_ceil(threads);
        if threads == 1 {
            run_slices(c, p, q, dst);
        } else {
            std::thread::scope(|s| {
                let mut parts = dst.chunks_mut(per).zip(c.chunks(per)).zip(p.chunks(per)).zip(q.chunks(per));
                let first = parts.next();
                for (((d, c), p), q) in parts {
                    s.spawn(move || run_slices(c, p, q, d));
                }
                if let Some((((d, c), p), q)) = first {
                    run_slices(c, p, q, d);
                }
            });
        }
        return Ok(());
    }
    let last = x.ndim() - 1;
    let len = x.size(last);
    let rows: Vec<(Lane<bool>, Lane<T>, Lane<T>)> =
        condition.lanes(last).zip(x.lanes(last)).zip(y.lanes(last)).map(|((c, p), q)| (c, p, q)).collect();
    let per = rows.len().div_ceil(threads);
    if threads == 1 {
        for ((c, p, q), d) in rows.iter().zip(dst.chunks_exact_mut(len)) {
            run_row(*c, *p, *q, d);
        }
        return Ok(());
    }
    std::thread::scope(|s| {
        let mut parts = rows.chunks(per).zip(dst.chunks_mut(per * len));
        let first = parts.next();
        for (group, block) in parts {
            s.spawn(move || {
                for ((c, p, q), d) in group.iter().zip(block.chunks_exact_mut(len)) {
                    run_row(*c, *p, *q, d);
                }
            });
        }
        if let Some((group, block)) = first {
            for ((c, p, q), d) in group.iter().zip(block.chunks_exact_mut(len)) {
                run_row(*c, *p, *q, d);
            }
        }
    });
    Ok(())
}
