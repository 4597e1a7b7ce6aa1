// numpy.clip, overload u16: out[i] = numpy.clip(a[i], a_min, a_max) for uint16 tensors with Python
// int bounds (they arrive as i64), exactly as NumPy 2 computes it (the result stays uint16).
//
// NumPy's _clip drops a bound outside uint16 on its own side (a_min <= 0, a_max >= 65535) and
// raises OverflowError for one outside on the far side (a_min > 65535, a_max < 0), whatever a
// holds (even when a is empty). So: check the far sides first (on the i64 bounds, before any
// narrowing), then lo = max(a_min, 0), hi = min(a_max, 65535), and
// t = x < lo ? lo : x; out = t > hi ? hi : t (lo > hi gives hi everywhere).
// The loop over a contiguous run is branch-free, so LLVM vectorises it. `a` may be strided (any
// strides, including 0 and negative), 0-d or empty; `out` is contiguous with a's shape: a strided
// lane is copied to a buffer first.
use opgen::{Error, Result, TensorMut, TensorRef};

type T = u16;

#[inline(always)]
fn apply(s: T, lo: T, hi: T) -> T {
    let t = if s < lo { lo } else { s };
    if t > hi {
        hi
    } else {
        t
    }
}

fn run(src: &[T], dst: &mut [T], lo: T, hi: T) {
    for (d, &s) in dst.iter_mut().zip(src) {
        *d = apply(s, lo, hi);
    }
}

pub fn numpy_clip__u16(a: &TensorRef<u16>, a_min: i64, a_max: i64, out: &mut TensorMut<u16>) -> Result<()> {
    if a_min > 65535 {
        return Err(Error::overflow("Python integer a_min out of bounds for uint16"));
    }
    if a_max < 0 {
        return Err(Error::overflow("Python integer a_max out of bounds for uint16"));
    }
    let lo = a_min.max(0) as T; // now within uint16
    let hi = a_max.min(65535) as T;
    let dst = out.as_mut_slice();
    if dst.is_empty() {
        return Ok(());
    }
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
    let mut buf: Vec<T> = vec![0; len];
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
