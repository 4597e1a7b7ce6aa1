// numpy.logical_and, overload bool: out = x1 and x2 elementwise on bool tensors, NumPy broadcasting.
//
// The shim has already broadcast x1 and x2 to out's shape (stride 0 along broadcast dims). Input
// bools are one byte holding exactly 0 or 1 (the shim checks it), so the bitwise form on the
// bytes is the logical one and every output byte is exactly 0 or 1.
//
// Speed: both inputs contiguous is one slice loop LLVM vectorises over bytes; otherwise rows
// along the last dim, each specialised on the two inner strides. Large outputs are split over
// scoped threads.
use opgen::{Lane, Result, TensorMut, TensorRef};

type T = bool;
// Elements per thread below which a thread costs more than it saves (a scoped thread is spawned
// and joined per call, some tens of microseconds; the loop is bound by the per-element division).
const PER_THREAD_MIN: usize = 1 << 17;

#[inline(always)]
fn apply(x: T, y: T) -> T {
    x & y
}

fn run_slices(x: &[T], y: &[T], d: &mut [T]) {
    for ((o, &p), &q) in d.iter_mut().zip(x).zip(y) {
        *o = apply(p, q);
    }
}

fn run_row(x: Lane<T>, y: Lane<T>, d: &mut [T]) {
    match (x.as_slice(), y.as_slice()) {
        (Some(p), Some(q)) => run_slices(p, q, d),
        (Some(p), None) if y.stride() == 0 => {
            let q = y.get(0);
            d.iter_mut().zip(p).for_each(|(o, &p)| *o = apply(p, q));
        }
        (None, Some(q)) if x.stride() == 0 => {
            let p = x.get(0);
            d.iter_mut().zip(q).for_each(|(o, &q)| *o = apply(p, q));
        }
        _ => d.iter_mut().zip(x.iter().zip(y.iter())).for_each(|(o, (p, q))| *o = apply(p, q)),
    }
}

pub fn numpy_logical_and__bool(x1: &TensorRef<bool>, x2: &TensorRef<bool>, out: &mut TensorMut<bool>) -> Result<()> {
    let n = out.numel();
    if n == 0 {
        return Ok(());
    }
    let threads = opgen::max_threads().min(n / PER_THREAD_MIN).max(1);
    let dst = out.as_mut_slice();
    if let (Some(x), Some(y)) = (x1.as_slice(), x2.as_slice()) {
        let per = n.div_ceil(threads);
        if threads == 1 {
            run_slices(x, y, dst);
        } else {
            std::thread::scope(|s| {
                let mut parts = dst.chunks_mut(per).zip(x.chunks(per)).zip(y.chunks(per));
                let first = parts.next();
                for ((d, p), q) in parts {
                    s.spawn(move || run_slices(p, q, d));
                }
                if let Some(((d, p), q)) = first {
                    run_slices(p, q, d); // the calling thread takes a share too
                }
            });
        }
        return Ok(());
    }
    // Not both contiguous: rows along the last dim (a 0-d view is always contiguous).
    let last = x1.ndim() - 1;
    let len = x1.size(last);
    let rows: Vec<(Lane<T>, Lane<T>)> = x1.lanes(last).zip(x2.lanes(last)).collect();
    let per = rows.len().div_ceil(threads);
    if threads == 1 {
        for ((x, y), d) in rows.iter().zip(dst.chunks_exact_mut(len)) {
            run_row(*x, *y, d);
        }
        return Ok(());
    }
    std::thread::scope(|s| {
        let mut parts = rows.chunks(per).zip(dst.chunks_mut(per * len));
        let first = parts.next();
        for (group, block) in parts {
            s.spawn(move || {
                for ((x, y), d) in group.iter().zip(block.chunks_exact_mut(len)) {
                    run_row(*x, *y, d);
                }
            });
        }
        if let Some((group, block)) = first {
            for ((x, y), d) in group.iter().zip(block.chunks_exact_mut(len)) {
                run_row(*x, *y, d);
            }
        }
    });
    Ok(())
}
