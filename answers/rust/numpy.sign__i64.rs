// numpy.sign, overload i64: out[i] = sign(x[i]) elementwise for int64 tensors.
//
// -1, 0 or 1 as x[i] is negative, zero or positive ((x > 0) - (x < 0): no overflow at -2^63).
// The loop over a contiguous run is branch-free, so LLVM vectorises it (512-bit registers with
// AVX-512). `x` may be strided (any strides, including 0 and negative), 0-d or empty; `out` is
// contiguous with x's shape: a strided lane is copied to a buffer first.
use opgen::{Result, TensorMut, TensorRef};

#[inline(always)]
fn apply(s: i64) -> i64 {
    (s > 0) as i64 - (s < 0) as i64
}

fn run(src: &[i64], dst: &mut [i64]) {
    for (d, &s) in dst.iter_mut().zip(src) {
        *d = apply(s);
    }
}

pub fn numpy_sign__i64(x: &TensorRef<i64>, out: &mut TensorMut<i64>) -> Result<()> {
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
    let mut buf = vec![0i64; len];
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
