// torch.nn.functional.normalize, overload f32: out = x / max(||x||_2, eps) along `dim`.
//
// Only p = 2 is native (anything else is a ValueError). Each lane's sum of squares is taken
// in double (no overflow or underflow for float32 inputs, within an ulp of exact), then
// every element is divided in double and rounded once. A nan in a lane makes the norm nan and
// so the whole lane nan; an inf makes the norm inf, so finite entries become 0 and infinite
// ones nan (inf / inf), as in PyTorch. The clamp keeps a nan norm nan (a comparison, not
// f64::max, which would pick eps). `dim` may be negative; a 0-d input is one lane of one
// element; lanes that are not contiguous (dim not innermost) are gathered into a buffer.
use opgen::{Error, Result, TensorMut, TensorRef};

fn normalize_run(src: &[f32], dst: &mut [f32], eps: f64) {
    let mut acc = [0.0f64; 8];
    let chunks = src.chunks_exact(8);
    let tail = chunks.remainder();
    for c in chunks {
        for j in 0..8 {
            acc[j] += c[j] as f64 * c[j] as f64;
        }
    }
    let mut sum = ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
    for &x in tail {
        sum += x as f64 * x as f64;
    }
    let norm = sum.sqrt();
    let denom = if norm < eps { eps } else { norm };
    for (d, &x) in dst.iter_mut().zip(src) {
        *d = (x as f64 / denom) as f32;
    }
}

pub fn torch_nn_functional_normalize__f32(
    input: &TensorRef<f32>,
    p: f64,
    dim: i64,
    eps: f64,
    out: &mut TensorMut<f32>,
) -> Result<()> {
    if p != 2.0 {
        return Err(Error::value("only p = 2 (the L2 norm) is supported natively"));
    }
    let nd = input.ndim() as i64;
    if nd == 0 {
        if !(-1..=0).contains(&dim) {
            return Err(Error::value("dim out of range for a 0-d tensor"));
        }
        let x = [input.item()];
        normalize_run(&x, out.as_mut_slice(), eps);
        return Ok(());
    }
    if dim < -nd || dim >= nd {
        return Err(Error::value("dim out of range"));
    }
    let ax = (if dim < 0 { dim + nd } else { dim }) as usize;
    let len = input.size(ax);
    if out.is_empty() || len == 0 {
        return Ok(());
    }
    let mut src_buf = vec![0.0f32; len];
    let mut dst_buf = vec![0.0f32; len];
    for (x, mut y) in input.lanes(ax).zip(out.lanes_mut(ax)) {
        let src = match x.as_slice() {
            Some(s) => s,
            None => {
                x.copy_to(&mut src_buf);
                &src_buf
            }
        };
        match y.as_mut_slice() {
            Some(d) => normalize_run(src, d, eps),
            None => {
                normalize_run(src, &mut dst_buf, eps);
                y.copy_from(&dst_buf);
            }
        }
    }
    Ok(())
}
