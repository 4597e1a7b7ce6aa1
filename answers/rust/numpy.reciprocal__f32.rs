// numpy.reciprocal, overload f32: out[i] = 1 / x[i] elementwise for float32 tensors.
//
// One IEEE division per element, exactly as NumPy computes it: 1/+-0 = +-inf, 1/+-inf = +-0,
// nan stays nan, no flush to zero.
// The loop over a contiguous run is branch-free, so LLVM vectorises it (512-bit registers with
// AVX-512). `x` may be strided (any strides, including 0 and negative), 0-d or empty; `out` is
// contiguous with x's shape: a strided lane is copied to a buffer first.
use opgen::{Result, TensorMut, TensorRef};

#[inline(always)]
fn apply(s: f32) -> f32 {
    1.0 / s
}

fn run(src: &[f32], dst: &mut [f32]) {
    for (d, &s) in dst.iter_mut().zip(src) {
        *d = apply(s);
    }
}

pub fn numpy_reciprocal__f32(x: &TensorRef<f32>, out: &mut TensorMut<f32>) -> Result<()> {
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
