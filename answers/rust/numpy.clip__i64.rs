// numpy.clip, overload i64: out[i] = min(max(x[i], a_min), a_max) elementwise for int64 tensors
// with scalar bounds, exactly as numpy.clip computes it.
//
// t = x < a_min ? a_min : x; out = t > a_max ? a_max : t, exactly; a_min > a_max gives a_max.
// The loop over a contiguous run is branch-free, so LLVM vectorises it (512-bit registers with
// AVX-512). `x` may be strided (any strides, including 0 and negative), 0-d or empty; `out` is
// contiguous with x's shape: a strided lane is copied to a buffer first.
use opgen::{Result, TensorMut, TensorRef};

#[inline(always)]
fn apply(s: i64, lo: i64, hi: i64) -> i64 {
    let t = if s < lo { lo } else { s };
    if t > hi {
        hi
    } else {
        t
    }
}

fn run(src: &[i64], dst: &mut [i64], lo: i64, hi: i64) {
    for (d, &s) in dst.iter_mut().zip(src) {
        *d = apply(s, lo, hi);
    }
}

pub fn numpy_clip__i64(a: &TensorRef<i64>, a_min: i64, a_max: i64, out: &mut TensorMut<i64>) -> Result<()> {
    let (lo, hi) = (a_min, a_max);
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
    let mut buf = vec![0i64; len];
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
