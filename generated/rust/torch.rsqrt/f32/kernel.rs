// torch.rsqrt, overload f32: out[i] = 1 / sqrt(input[i]) elementwise for float32 tensors.
//
// One correctly rounded IEEE square root and one correctly rounded division, in the
// tensor's own dtype, exactly as torch computes it (bit for bit). rsqrt(0) = inf, rsqrt(-0.0) = -inf (1 / -0.0), x < 0 and -inf give nan,
// rsqrt(inf) = 0, nan gives nan.
// `x` may be strided (any strides, including 0 and negative), 0-d or empty; `out` is
// contiguous with x's shape: a strided lane is copied to a buffer first.
use opgen::{Result, TensorMut, TensorRef};

#[inline(always)]
fn op1(v: f32) -> f32 {
    1.0 / v.sqrt()
}

fn op_run(src: &[f32], dst: &mut [f32]) {
    for (d, &s) in dst.iter_mut().zip(src) {
        *d = op1(s);
    }
}

pub fn torch_rsqrt__f32(input: &TensorRef<f32>, out: &mut TensorMut<f32>) -> Result<()> {
    let x = input;
    let dst = out.as_mut_slice();
    if let Some(src) = x.as_slice() {
        op_run(src, dst);
        return Ok(());
    }
    // Strided: lane by lane along the last dim (each a contiguous run of out).
    let last = x.ndim() - 1; // a 0-d view is always contiguous
    let len = x.size(last);
    if len == 0 {
        return Ok(());
    }
    let mut buf = vec![0.0 as f32; len];
    for (lane, d) in x.lanes(last).zip(dst.chunks_exact_mut(len)) {
        match lane.as_slice() {
            Some(s) => op_run(s, d),
            None => {
                lane.copy_to(&mut buf);
                op_run(&buf, d);
            }
        }
    }
    Ok(())
}
