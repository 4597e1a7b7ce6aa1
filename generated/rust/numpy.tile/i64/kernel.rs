// numpy.tile, overload i64: out = numpy.tile(A, reps). With d = max(A.ndim, len(reps)) and A's
// shape s and reps r padded with leading 1s to d entries, out (contiguous, shape s[i] * r[i]) is
// the row-major copy of a 2d-dim view of A's elements: shape (r0, s0, r1, s1, ...), strides (0,
// c0, 0, c1, ...), c the row-major strides of A's contiguous copy. A rep dim reads the same
// elements again, so the tiles come out in numpy.tile's order (a, b, a, b). The shim has raised
// NumPy's ValueError for negative reps. Size-1 dims are dropped and neighbours merged; out is
// written one row (the innermost merged dim) at a time: a slice copy, a fill, or a strided read.
use opgen::{Result, TensorMut, TensorRef};

type T = i64;

#[allow(non_snake_case)]
pub fn numpy_tile__i64(A: &TensorRef<T>, reps: &[i64], out: &mut TensorMut<T>) -> Result<()> {
    let dst = out.as_mut_slice();
    if dst.is_empty() {
        return Ok(());
    }
    let src: Vec<T> = A.to_vec(); // row-major, whatever A's strides
    let nd = A.ndim();
    let d = nd.max(reps.len());
    let mut contiguous = vec![1usize; nd];
    for i in (0..nd.saturating_sub(1)).rev() {
        contiguous[i] = contiguous[i + 1] * A.size(i + 1);
    }
    // The view's dims, size-1 dims dropped and neighbours merged.
    let (mut sh, mut st): (Vec<usize>, Vec<usize>) = (Vec::new(), Vec::new());
    for i in 0..d {
        let rep = if i + reps.len() >= d { reps[i + reps.len() - d] as usize } else { 1 };
        let (size, stride) = if i + nd >= d { (A.size(i + nd - d), contiguous[i + nd - d]) } else { (1, 0) };
        for (n, s) in [(rep, 0usize), (size, stride)] {
            if n == 1 {
                continue;
            }
            match (sh.last_mut(), st.last_mut()) {
                (Some(pn), Some(ps)) if *ps == s * n => {
                    *pn *= n;
                    *ps = s;
                }
                _ => {
                    sh.push(n);
                    st.push(s);
                }
            }
        }
    }
    if sh.is_empty() {
        dst[0] = src[0];
        return Ok(());
    }
    let k = sh.len();
    let (len, s) = (sh[k - 1], st[k - 1]);
    let mut idx = vec![0usize; k];
    let mut off = 0usize;
    for row in dst.chunks_exact_mut(len) {
        if s == 1 {
            row.copy_from_slice(&src[off..off + len]);
        } else if s == 0 {
            row.fill(src[off]);
        } else {
            for (j, y) in row.iter_mut().enumerate() {
                *y = src[off + j * s];
            }
        }
        for dd in (0..k - 1).rev() {
            // the next row: an odometer over the outer dims
            idx[dd] += 1;
            off += st[dd];
            if idx[dd] < sh[dd] {
                break;
            }
            off -= st[dd] * sh[dd];
            idx[dd] = 0;
        }
    }
    Ok(())
}
