// torch.triu, overload i64: the upper triangle of each matrix in input's last two dims, the rest 0.
//
// input is (*, m, n); out[..., i, j] = input[..., i, j] where j - i >= diagonal, else 0 (+0.0 for
// floats, whatever input held). Row i keeps the columns j in [max(0, i + diagonal), n), with the diagonal clamped to
// [-m, n] first so that i + diagonal cannot overflow (any i64 diagonal is legal). Each output row is
// a copy of the kept run and zeros elsewhere; a contiguous input is split across std threads by rows
// when large, a strided one is read lane by lane. Kept values are copied bit for bit.
use opgen::{Error, Result, TensorMut, TensorRef};

type T = i64;
const PER_THREAD: usize = 1 << 20; // elements: a copy is bandwidth-bound, so only large ones are split across threads

fn run(i: usize, m: usize, n: usize, k: i64) -> (usize, usize) {
    let _ = m;
    let i = i as i64;
    let lo: i64 = (i + k).clamp(0, n as i64);
    let hi: i64 = n as i64;
    (lo as usize, hi as usize)
}

fn fill_row(y: &mut [T], x: &[T], lo: usize, hi: usize) {
    for v in y[..lo].iter_mut() {
        *v = 0 as T;
    }
    if lo < hi {
        y[lo..hi].copy_from_slice(&x[lo..hi]);
    }
    for v in y[hi.max(lo)..].iter_mut() {
        *v = 0 as T;
    }
}

pub fn torch_triu__i64(input: &TensorRef<T>, diagonal: i64, out: &mut TensorMut<T>) -> Result<()> {
    let nd = input.ndim();
    if nd < 2 {
        return Err(Error::value("triu: input tensor must have at least 2 dimensions"));
    }
    let m = input.size(nd - 2);
    let n = input.size(nd - 1);
    let dst = out.as_mut_slice();
    if dst.is_empty() {
        return Ok(());
    }
    let k = diagonal.clamp(-(m as i64), n as i64);
    if let Some(src) = input.as_slice() {
        let rows = dst.len() / n;
        let threads = opgen::max_threads().max(1).min((dst.len() / PER_THREAD).max(1));
        let per = (rows + threads - 1) / threads;
        std::thread::scope(|sc| {
            for (g, chunk) in dst.chunks_mut(per * n).enumerate() {
                let mut work = move || {
                    for (r, y) in chunk.chunks_exact_mut(n).enumerate() {
                        let row = g * per + r;
                        let (lo, hi) = run(row % m, m, n, k);
                        fill_row(y, &src[row * n..row * n + n], lo, hi);
                    }
                };
                if threads == 1 {
                    work();
                } else {
                    sc.spawn(work);
                }
            }
        });
        return Ok(());
    }
    let mut buf = vec![0 as T; n];
    for (row, (lane, y)) in input.lanes(nd - 1).zip(dst.chunks_exact_mut(n)).enumerate() {
        lane.copy_to(&mut buf);
        let (lo, hi) = run(row % m, m, n, k);
        fill_row(y, &buf, lo, hi);
    }
    Ok(())
}
