// numpy.negative, overload i64: out[i] = -x[i] elementwise for int64 tensors.
//
// Two's complement negation modulo 2**64, as NumPy and PyTorch compute it on int64:
// negative(-2**63) is -2**63 (wrapping_neg: it wraps, no error and no panic).
// The loop over a contiguous run is branch-free, so LLVM vectorises it (512-bit registers with
// AVX-512). `x` may be strided (any strides, including 0 and negative), 0-d or empty; `out` is
// contiguous with x's shape: a strided lane is copied to a buffer first.
use opgen::{Result, TensorMut, TensorRef};

fn negative_run(src: &[i64], dst: &mut [i64]) {
    for (d, &s) in dst.iter_mut().zip(src) {
        *d = s.wrapping_neg();
    }
}

pub fn numpy_negative__i64(x: &TensorRef<i64>, out: &mut TensorMut<i64>) -> Result<()> {
    let dst = out.as_mut_slice();
    if let Some(src) = x.as_slice() {
        negative_run(src, dst);
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
            Some(s) => negative_run(s, d),
            None => {
                lane.copy_to(&mut buf);
                negative_run(&buf, d);
            }
        }
    }
    Ok(())
}
