// torch.nn.functional.relu, overload f32: out[i] = input[i] < 0 ? +0.0 : input[i].
//
// Exactly PyTorch's clamp_min(x, 0): nan stays nan (the comparison is false), -0.0 stays -0.0,
// negative numbers and -inf give +0.0, +inf and positive subnormals are kept. The select has no
// branch, so LLVM vectorises the loop over a contiguous run (a compare and a masked blend).
//
// `out` is contiguous with input's shape; input may be strided (rows along the last dim are
// gathered into a buffer when they are not contiguous). Large tensors are split over scoped
// threads, at most opgen::max_threads() of them.
use opgen::{Result, TensorMut, TensorRef};

type T = f32;
// Elements per thread below which one thread is faster: a scoped thread is spawned per call
// (tens of microseconds), and this loop streams memory at about 0.07 ns an element.
const PER_THREAD_MIN: usize = 1 << 21;

#[inline(always)]
fn relu(x: T) -> T {
    if x < 0.0 { 0.0 } else { x }
}

fn run(src: &[T], dst: &mut [T]) {
    dst.iter_mut().zip(src).for_each(|(d, &x)| *d = relu(x));
}

pub fn torch_nn_functional_relu__f32(input: &TensorRef<f32>, out: &mut TensorMut<f32>) -> Result<()> {
    let n = out.numel();
    if n == 0 {
        return Ok(());
    }
    let threads = opgen::max_threads().min(n / PER_THREAD_MIN).max(1);
    let dst = out.as_mut_slice();
    if let Some(src) = input.as_slice() {
        if threads == 1 {
            run(src, dst);
            return Ok(());
        }
        let per = n.div_ceil(threads).next_multiple_of(64);
        std::thread::scope(|s| {
            let mut parts = src.chunks(per).zip(dst.chunks_mut(per));
            let mine = parts.next();
            for (x, y) in parts {
                s.spawn(move || run(x, y));
            }
            if let Some((x, y)) = mine {
                run(x, y);
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
                Some(x) => run(x, y),
                None => {
                    row.copy_to(&mut buf);
                    run(&buf, y);
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
