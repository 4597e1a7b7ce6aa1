// opgen.cast, overload u32_to_i64: out = x.astype(int64) elementwise, uint32 -> int64.
//
// Conversion: widening: exact.
// A contiguous input is one slice loop; otherwise rows along the last dim, a unit-stride row as a
// slice. `x` may be strided, 0-d or empty; `out` is contiguous. Written by scripts/cast_kernels.py.
use opgen::{Result, TensorMut, TensorRef};

#[inline(always)]
fn convert(v: u32) -> i64 {
    v as i64
}

pub fn opgen_cast__u32_to_i64(x: &TensorRef<u32>, out: &mut TensorMut<i64>) -> Result<()> {
    let n = out.numel();
    if n == 0 {
        return Ok(());
    }
    let dst = out.as_mut_slice();
    if let Some(s) = x.as_slice() {
        for (o, &v) in dst.iter_mut().zip(s) {
            *o = convert(v);
        }
        return Ok(());
    }
    if x.ndim() == 0 {
        dst[0] = convert(x.item());
        return Ok(());
    }
    let last = x.ndim() - 1;
    let len = x.size(last);
    for (lane, d) in x.lanes(last).zip(dst.chunks_exact_mut(len)) {
        match lane.as_slice() {
            Some(s) => d.iter_mut().zip(s).for_each(|(o, &v)| *o = convert(v)),
            None => d.iter_mut().zip(lane.iter()).for_each(|(o, v)| *o = convert(v)),
        }
    }
    Ok(())
}
