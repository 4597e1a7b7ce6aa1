// numpy.expand_dims, overload f64: out = a with a dim of 1 inserted at `axis` (checked by the
// shim). A dim of size 1 moves no data: out is a's elements in C order (one copy for a contiguous
// a, lane by lane for a strided one). Bit for bit.
use opgen::{Result, TensorMut, TensorRef};

type T = f64;

const PER_THREAD: usize = 1 << 16; // elements: below this a second thread costs more than it saves
const TILE: usize = 32; // the 2-D tile of a blocked transpose (32 x 32 elements)

/// Row-major dims of a view of a contiguous source (strides in elements, all >= 0), size-1
/// dims dropped and neighbours merged wherever the source allows.
fn collapse(shape: &[usize], stride: &[usize]) -> (Vec<usize>, Vec<usize>) {
    let mut sh: Vec<usize> = Vec::new();
    let mut st: Vec<usize> = Vec::new();
    for (&n, &s) in shape.iter().zip(stride) {
        if n == 1 {
            continue;
        }
        if let (Some(last_n), Some(last_s)) = (sh.last_mut(), st.last_mut()) {
            if *last_s == s * n {
                *last_n *= n;
                *last_s = s;
                continue;
            }
        }
        sh.push(n);
        st.push(s);
    }
    (sh, st)
}

fn team_for(total: usize) -> usize {
    let by_size = (total / PER_THREAD).max(1);
    opgen::max_threads().max(1).min(by_size)
}

/// The source offset of item `item` of the row-major index over `shape`.
fn unravel(mut item: usize, shape: &[usize], stride: &[usize]) -> usize {
    let mut off = 0;
    for d in (0..shape.len()).rev() {
        off += (item % shape[d]) * stride[d];
        item /= shape[d];
    }
    off
}

/// dst = the contiguous copy of the view (shape, stride) of the contiguous buffer src.
fn copy_view(src: &[T], shape: &[usize], stride: &[usize], dst: &mut [T]) {
    let total = dst.len();
    if total == 0 {
        return;
    }
    let (sh, st) = collapse(shape, stride);
    let nd = sh.len();
    if nd == 0 {
        dst[0] = src[0];
        return;
    }
    let threads = team_for(total);
    if nd == 1 && st[0] == 1 {
        // contiguous: one copy, split across threads
        let per = (total + threads - 1) / threads;
        std::thread::scope(|sc| {
            for (i, d) in dst.chunks_mut(per).enumerate() {
                let s = &src[i * per..i * per + d.len()];
                if threads == 1 {
                    d.copy_from_slice(s);
                } else {
                    sc.spawn(move || d.copy_from_slice(s));
                }
            }
        });
        return;
    }
    let n = sh[nd - 1];
    let s = st[nd - 1];
    if s != 1 && nd >= 2 && st[nd - 2] == 1 {
        // out is (items, m, n) with the source contiguous along m: 32 x 32 tiles, units of up to
        // 32 rows of one item's m x n block
        let m = sh[nd - 2];
        let (osh, ost) = (&sh[..nd - 2], &st[..nd - 2]);
        let mut units: Vec<(usize, usize, &mut [T])> = Vec::new();
        for (item, block) in dst.chunks_mut(m * n).enumerate() {
            for (t, rows) in block.chunks_mut(TILE * n).enumerate() {
                units.push((item, t * TILE, rows));
            }
        }
        let per = (units.len() + threads - 1) / threads;
        let work = |group: &mut [(usize, usize, &mut [T])]| {
            for (item, i0, rows) in group.iter_mut() {
                let base = unravel(*item, osh, ost) + *i0;
                let h = rows.len() / n;
                let mut j0 = 0;
                while j0 < n {
                    let j1 = (j0 + TILE).min(n);
                    for i in 0..h {
                        let x = base + i;
                        let row = &mut rows[i * n..(i + 1) * n];
                        for j in j0..j1 {
                            row[j] = src[x + j * s];
                        }
                    }
                    j0 = j1;
                }
            }
        };
        std::thread::scope(|sc| {
            for group in units.chunks_mut(per.max(1)) {
                if threads == 1 {
                    work(group);
                } else {
                    let w = &work;
                    sc.spawn(move || w(group));
                }
            }
        });
        return;
    }
    // rows along the inner dim, strided or not
    let (osh, ost) = (&sh[..nd - 1], &st[..nd - 1]);
    let rows = total / n;
    let per = (rows + threads - 1) / threads;
    let work = |first: usize, chunk: &mut [T]| {
        for (r, row) in chunk.chunks_exact_mut(n).enumerate() {
            let x = unravel(first + r, osh, ost);
            if s == 1 {
                row.copy_from_slice(&src[x..x + n]);
            } else {
                for (j, v) in row.iter_mut().enumerate() {
                    *v = src[x + j * s];
                }
            }
        }
    };
    std::thread::scope(|sc| {
        for (g, chunk) in dst.chunks_mut(per * n).enumerate() {
            if threads == 1 {
                work(g * per, chunk);
            } else {
                let w = &work;
                sc.spawn(move || w(g * per, chunk));
            }
        }
    });
}

/// out = a's elements in row-major order (reshape, expand_dims, squeeze: the data does not move).
fn copy_in_order(a: &TensorRef<T>, out: &mut TensorMut<T>) {
    let dst = out.as_mut_slice();
    if dst.is_empty() {
        return;
    }
    if let Some(src) = a.as_slice() {
        let shape = [src.len()];
        copy_view(src, &shape, &[1], dst);
        return;
    }
    let last = a.ndim() - 1; // a 0-d view is always contiguous
    let len = a.size(last);
    for (lane, d) in a.lanes(last).zip(dst.chunks_exact_mut(len)) {
        lane.copy_to(d);
    }
}

pub fn numpy_expand_dims__f64(a: &TensorRef<T>, axis: i64, out: &mut TensorMut<T>) -> Result<()> {
    let _ = axis; // out's shape, checked by the shim: the data is a's in C order
    copy_in_order(a, out);
    Ok(())
}
