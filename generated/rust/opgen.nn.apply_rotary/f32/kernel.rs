// opgen.nn.apply_rotary, overload f32: rotary position embedding of x (*, S, D) from the
// precomputed tables cos, sin (*, S, R), as ONNX's RotaryEmbedding computes it.
//
// For every row and i < R, with (j1, j2) = (i, i + R) (rotate-half) or (2i, 2i + 1)
// (interleaved):  out[j1] = c*x[j1] - s*x[j2],  out[j2] = s*x[j1] + c*x[j2]  in float32
// (two products and a sum, each rounded: no fused multiply-add). Elements 2R..D are copied
// bit for bit. 2R > D is a ValueError.
// The shim has aligned the loop dims (stride 0 where the tables broadcast over heads), so the
// rows of x, cos and sin along the last dim come in the same order as out's rows; unit-stride
// rows are used as slices, others gathered into a buffer first. Large outputs split their rows
// over scoped threads.
use opgen::{Error, Lane, Result, TensorMut, TensorRef};

const PER_THREAD_MIN: usize = 1 << 15; // output elements per thread below which one thread is faster

fn rotate_half_row(x: &[f32], c: &[f32], s: &[f32], o: &mut [f32], r: usize) {
    let (x1, rest) = x.split_at(r);
    let x2 = &rest[..r];
    let (c, s) = (&c[..r], &s[..r]);
    let (o1, rest) = o.split_at_mut(r);
    let o2 = &mut rest[..r];
    for i in 0..r {
        let (a, b, cc, ss) = (x1[i], x2[i], c[i], s[i]);
        o1[i] = cc * a - ss * b;
        o2[i] = ss * a + cc * b;
    }
}

fn interleaved_row(x: &[f32], c: &[f32], s: &[f32], o: &mut [f32], r: usize) {
    for (((op, xp), &cc), &ss) in o[..2 * r].chunks_exact_mut(2).zip(x[..2 * r].chunks_exact(2)).zip(&c[..r]).zip(&s[..r]) {
        let (a, b) = (xp[0], xp[1]);
        op[0] = cc * a - ss * b;
        op[1] = ss * a + cc * b;
    }
}

fn slice_of<'a: 'c, 'c>(lane: &Lane<'a, f32>, buf: &'c mut Vec<f32>) -> &'c [f32] {
    match lane.as_slice() {
        Some(v) => v,
        None => {
            buf.resize(lane.len(), 0.0);
            lane.copy_to(buf);
            buf
        }
    }
}

fn run_rows(rows: &[(Lane<f32>, Lane<f32>, Lane<f32>)], dst: &mut [f32], d: usize, r: usize, interleaved: bool) {
    let (mut bx, mut bc, mut bs) = (Vec::new(), Vec::new(), Vec::new());
    for ((lx, lc, ls), o) in rows.iter().zip(dst.chunks_exact_mut(d)) {
        let x = slice_of(lx, &mut bx);
        let c = slice_of(lc, &mut bc);
        let s = slice_of(ls, &mut bs);
        if interleaved {
            interleaved_row(x, c, s, o, r);
        } else {
            rotate_half_row(x, c, s, o, r);
        }
        o[2 * r..].copy_from_slice(&x[2 * r..]);
    }
}

pub fn opgen_nn_apply_rotary__f32(
    x: &TensorRef<f32>,
    cos: &TensorRef<f32>,
    sin: &TensorRef<f32>,
    interleaved: bool,
    out: &mut TensorMut<f32>,
) -> Result<()> {
    let nd = x.ndim();
    let d = x.size(nd - 1);
    let r = cos.size(nd - 1);
    if 2 * r > d {
        return Err(Error::value(format!(
            "apply_rotary: the tables ({} wide) are wider than half a row of {}",
            r, d
        )));
    }
    let n = out.numel();
    if n == 0 {
        return Ok(());
    }
    let last = nd - 1;
    let rows: Vec<(Lane<f32>, Lane<f32>, Lane<f32>)> = x
        .lanes(last)
        .zip(cos.lanes(last))
        .zip(sin.lanes(last))
        .map(|((a, b), c)| (a, b, c))
        .collect();
    let threads = opgen::max_threads().min(n / PER_THREAD_MIN).max(1);
    let dst = out.as_mut_slice();
    if threads == 1 {
        run_rows(&rows, dst, d, r, interleaved);
        return Ok(());
    }
    let per = rows.len().div_ceil(threads);
    std::thread::scope(|s| {
        let mut parts = rows.chunks(per).zip(dst.chunks_mut(per * d));
        let first = parts.next();
        for (group, block) in parts {
            s.spawn(move || run_rows(group, block, d, r, interleaved));
        }
        if let Some((group, block)) = first {
            run_rows(group, block, d, r, interleaved);
        }
    });
    Ok(())
}
