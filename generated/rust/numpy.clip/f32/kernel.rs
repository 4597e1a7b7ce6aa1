// numpy.clip, overload f32: out[i] = min(max(x[i], a_min), a_max) elementwise for float32 tensors
// with scalar bounds, exactly as numpy.clip computes it.
//
// The bounds are rounded to float32 first (`as f32`: round to nearest, +-inf beyond the float32
// range), as NumPy converts a Python float for a float32 array.
// If either bound is nan the whole result is nan (a_min's nan if it is nan, else a_max's).
// Otherwise t = x < lo ? lo : x; out = t > hi ? hi : t: a nan x stays nan, on a tie x itself is
// kept (clip(-0.0, 0.0, 1.0) is -0.0, clip(0.0, -0.0, 0.0) is 0.0), and a_min > a_max gives a_max.
// The loop over a contiguous run is branch-free, so LLVM vectorises it (512-bit registers with
// AVX-512). `x` may be strided (any strides, including 0 and negative), 0-d or empty; `out` is
// contiguous with x's shape: a strided lane is copied to a buffer first.
use opgen::{Result, TensorMut, TensorRef};

#[inline(always)]
fn apply(s: f32, lo: f32, hi: f32) -> f32 {
    let t = if s < lo { lo } else { s };
    if t > hi {
        hi
    } else {
        t
    }
}

fn run(src: &[f32], dst: &mut [f32], lo: f32, hi: f32) {
    for (d, &s) in dst.iter_mut().zip(src) {
        *d = apply(s, lo, hi);
    }
}

pub fn numpy_clip__f32(a: &TensorRef<f32>, a_min: f64, a_max: f64, out: &mut TensorMut<f32>) -> Result<()> {
    let (lo, hi) = (a_min as f32, a_max as f32);
    if lo.is_nan() || hi.is_nan() {
        // a nan bound: NumPy's result is nan everywhere
        let fill = if lo.is_nan() { lo } else { hi };
        out.as_mut_slice().fill(fill);
        return Ok(());
    }
    let dst = out.as_mut_slice();
    if let Some(src) = a.as_slice() {
        run(src, dst, lo, hi);
        return Ok(());
    }
    // Strided: lane by lane along the last dim (each a contiguous run of out).
    let last = a.ndim() - 1; // a 0-d view is always contiguous
    let len = a.size(last);
    if len == 0 {
        return Ok(());
    }
    let mut buf = vec![0.0f32; len];
    for (lane, d) in a.lanes(last).zip(dst.chunks_exact_mut(len)) {
        match lane.as_slice() {
            Some(s) => run(s, d, lo, hi),
            None => {
                lane.copy_to(&mut buf);
                run(&buf, d, lo, hi);
            }
        }
    }
    Ok(())
}
