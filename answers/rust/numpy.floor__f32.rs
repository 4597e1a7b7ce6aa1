// numpy.floor, overload f32: out[i] = floor(x[i]) elementwise for float32 tensors.
//
// `f32::floor` is IEEE roundToIntegral (LLVM's floor, one vrndscale per vector with
// AVX-512), so the result is the largest integer value not greater than x[i]: floor(-0.0) = -0.0,
// floor(-0.5) = -1.0, floor(0.5) = +0.0;
// inf, -inf and already-integral values (|x| >= 2^23) are unchanged, nan stays nan.
// The loop over a contiguous run is branch-free, so LLVM vectorises it (512-bit registers with
// AVX-512). `x` may be strided (any strides, including 0 and negative), 0-d or empty; `out` is
// contiguous with x's shape: a strided lane is copied to a buffer first.
use opgen::{Result, TensorMut, TensorRef};

#[inline(always)]
fn apply(s: f32) -> f32 {
    s.floor()
}

fn run(src: &[f32], dst: &mut [f32]) {
    for (d, &s) in dst.iter_mut().zip(src) {
        *d = apply(s);
    }
}

pub fn numpy_floor__f32(x: &TensorRef<f32>, out: &mut TensorMut<f32>) -> Result<()> {
    let dst = out.as_mut_slice();
    if let Some(src) = x.as_slice() {
        run(src, dst);
        return Ok(());
    }
    // Strided: lane by lane along the last dim (each a contiguous run of out).
    let last = x.ndim() - 1; // a 0-d view is always contiguous
    let len = x.size(last);
    if len == 0 {
        return Ok(());
    }
    let mut buf = vec![0.0f32; len];
    for (lane, d) in x.lanes(last).zip(dst.chunks_exact_mut(len)) {
        match lane.as_slice() {
            Some(s) => run(s, d),
            None => {
                lane.copy_to(&mut buf);
                run(&buf, d);
            }
        }
    }
    Ok(())
}
