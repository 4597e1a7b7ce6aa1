// operator.mul, overload tensor_u64: out = a * b elementwise, NumPy broadcasting, uint64.
//
// The shim has already broadcast the inputs to out's shape (stride 0 along broadcast dims), so
// every element is out[i...] = f(a[i...], b[i...]) with
// f(x, y) = x * y modulo 2**64 (unsigned wrap-around, as NumPy computes it; no error,
// no panic: wrapping_mul).
//
// Speed: when both inputs are contiguous the whole tensor is one run; otherwise it is taken
// row by row along the last dim, each row specialised on the two inner strides (1/1, 1/0,
// 0/1, other). Large outputs are split over scoped threads.
use opgen::{Lane, Result, TensorMut, TensorRef};

type T = u64;
// Elements per thread below which a thread costs more than it saves (a scoped thread is spawned
// and joined per call, some tens of microseconds; the loop itself is memory-bound).
const PER_THREAD_MIN: usize = 1 << 17;

#[inline(always)]
fn apply(x: T, y: T) -> T {
    x.wrapping_mul(y)
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

pub fn operator_mul__tensor_u64(a: &TensorRef<u64>, b: &TensorRef<u64>, out: &mut TensorMut<u64>) -> Result<()> {
    let n = out.numel();
    if n == 0 {
        return Ok(());
    }
    let threads = opgen::max_threads().min(n / PER_THREAD_MIN).max(1);
    let dst = out.as_mut_slice();
    if let (Some(x), Some(y)) = (a.as_slice(), b.as_slice()) {
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
    let last = a.ndim() - 1;
    let len = a.size(last);
    let rows: Vec<(Lane<T>, Lane<T>)> = a.lanes(last).zip(b.lanes(last)).collect();
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
