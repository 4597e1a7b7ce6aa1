// torch.nn.functional.leaky_relu, overload f64: out[i] = x > 0 ? x : x * slope, x = input[i].
//
// Exactly PyTorch's CPU kernel: the product is one double multiply, so the result is bit for
// bit the reference's. nan fails the comparison and gives nan * slope = nan; -0.0 and +0.0
// take the product (-0.0 for a positive slope, and +0.0 * a negative slope is -0.0); -inf
// gives -inf * slope (nan for slope 0); +inf is kept; subnormal products are kept (no flush).
// The select has no branch, so LLVM vectorises the loop over a contiguous run.
//
// `out` is contiguous with input's shape; input may be strided (rows along the last dim are
// gathered into a buffer when they are not contiguous). Large tensors are split over scoped
// threads, at most opgen::max_threads() of them.
use opgen::{Result, TensorMut, TensorRef};

type T = f64;
// Elements per thread below which one thread is faster: a scoped thread is spawned per call
// (tens of microseconds), and this loop streams memory at about 0.07 ns an element.
const PER_THREAD_MIN: usize = 1 << 21;

fn run(src: &[T], dst: &mut [T], slope: T) {
    dst.iter_mut().zip(src).for_each(|(d, &x)| *d = if x > 0.0 { x } else { x * slope });
}

pub fn torch_nn_functional_leaky_relu__f64(input: &TensorRef<f64>, negative_slope: f64, out: &mut TensorMut<f64>) -> Result<()> {
    let slope = negative_slope;
    let n = out.numel();
    if n == 0 {
        return Ok(());
    }
    let threads = opgen::max_threads().min(n / PER_THREAD_MIN).max(1);
    let dst = out.as_mut_slice();
    if let Some(src) = input.as_slice() {
        if threads == 1 {
            run(src, dst, slope);
            return Ok(());
        }
        let per = n.div_ceil(threads).next_multiple_of(64);
        std::thread::scope(|s| {
            let mut parts = src.chunks(per).zip(dst.chunks_mut(per));
            let mine = parts.next();
            for (x, y) in parts {
                s.spawn(move || run(x, y, slope));
            }
            if let Some((x, y)) = mine {
                run(x, y, slope);
            }
        });
        return Ok(());
    }
    // Strided: row by row along the last dim (a 0-d view is always contiguous).
    let last = input.ndim() - 1;
    let len = input.size(last);
    let rows: Vec<_> = input.lanes(last).collect();
    let per = rows.len().div_ceil(threads);
    let work = |group: &[opgen::Lane<'_, T>], block: &mut [T]| {
        let mut buf = vec![0.0 as T; len];
        for (row, y) in group.iter().zip(block.chunks_exact_mut(len)) {
            match row.as_slice() {
                Some(x) => run(x, y, slope),
                None => {
                    row.copy_to(&mut buf);
                    run(&buf, y, slope);
                }
            }
        }
    };
    if threads == 1 {
        work(&rows, dst);
        return Ok(());
    }
    std::thread::scope(|s| {
        for (group, block) in rows.chunks(per).zip(dst.chunks_mut(per * len)) {
            s.spawn(move || work(group, block));
        }
    });
    Ok(())
}
