// numpy.transpose, overload i64: out = a with its axes permuted by `axes`, as a contiguous copy.
//
// out[i_0, ..., i_{n-1}] = a[j] with j[axes[k]] = i_k (a negative entry counts from the end; the
// shim has checked that axes is a permutation). For a contiguous a the kernel builds the permuted
// view (shape and strides) and copies it: size-1 dims dropped and neighbours merged, rows copied
// with copy_from_slice where out's inner dim is contiguous in a (the attention head split), a
// dim contiguous in a transposed against out's inner dim in 32 x 32 tiles otherwise, large
// copies split across std threads. A strided a is copied lane by lane (a's lanes along the axis
// that is out's inner dim). Values are copied bit for bit.
use opgen::{Error, Result, TensorMut, TensorRef};

type T = i64;

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

/// Row-major strides of a contiguous tensor of this shape.
fn contiguous_strides(shape: &[usize]) -> Vec<usize> {
    let mut st = vec![1usize; shape.len()];
    for d in (0..shape.len().saturating_sub(1)).rev() {
        st[d] = st[d + 1] * shape[d + 1];
    }
    st
}


pub fn numpy_transpose__i64(a: &TensorRef<T>, axes: &[i64], out: &mut TensorMut<T>) -> Result<()> {
    let nd = a.ndim();
    if axes.len() != nd {
        return Err(Error::value("axes don't match array"));
    }
    let mut ax = Vec::with_capacity(nd);
    for &x in axes {
        let k = if x < 0 { x + nd as i64 } else { x };
        if k < 0 || k >= nd as i64 {
            return Err(Error::value("axis out of range"));
        }
        ax.push(k as usize);
    }
    if let Some(src) = a.as_slice() {
        let cs = contiguous_strides(a.shape());
        let shape: Vec<usize> = ax.iter().map(|&d| a.size(d)).collect();
        let stride: Vec<usize> = ax.iter().map(|&d| cs[d]).collect();
        copy_view(src, &shape, &stride, out.as_mut_slice());
        return Ok(());
    }
    // a strided a (never 0-d: a 0-d view is contiguous): out's rows are lanes of a
    let dst = out.as_mut_slice();
    if dst.is_empty() {
        return Ok(());
    }
    let last = ax[nd - 1];
    let n = a.size(last);
    let oshape: Vec<usize> = ax[..nd - 1].iter().map(|&d| a.size(d)).collect();
    let mut idx = vec![0usize; nd];
    let mut others: Vec<usize> = Vec::with_capacity(nd);
    for (r, row) in dst.chunks_exact_mut(n).enumerate() {
        let mut rem = r;
        for i in (0..nd - 1).rev() {
            idx[ax[i]] = rem % oshape[i];
            rem /= oshape[i];
        }
        others.clear();
        for d in 0..nd {
            if d != last {
                others.push(idx[d]);
            }
        }
        a.lane(last, &others).copy_to(row);
    }
    Ok(())
}
