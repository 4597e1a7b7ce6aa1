// opgen.assign_region, overload bool: out = x with out[region] = value (NumPy's x[region] = value on a copy of x).
//
// The region along dim d is the positions starts[d] + i*steps[d] for i in [0, value.shape[d]) (a negative
// step walks backwards); the shim has checked that value has x's rank, that no step is 0 and that every
// position lies in x, so nothing is written outside out and nothing twice. out is contiguous in C order.
// x is copied into it whole (a slice copy when x is contiguous, else lane by lane along its last dim);
// then value's lanes along its last dim are walked in C order with an odometer over its leading dims that
// carries the matching offset in out (a step along dim d moves out by steps[d] times out's stride there),
// and each lane is written in a tight loop: a slice copy where the region's step is 1, a strided walk
// over out (forwards, or backwards for a negative step) otherwise. Elements are copied bit for bit.
use opgen::{Result, TensorMut, TensorRef};

type T = bool;

pub fn opgen_assign_region__bool(x: &TensorRef<T>, value: &TensorRef<T>, starts: &[i64], steps: &[i64], out: &mut TensorMut<T>) -> Result<()> {
    let nd = x.ndim();
    let dst = out.as_mut_slice();
    if dst.is_empty() {
        return Ok(());
    }
    if nd == 0 {
        dst[0] = value.item(); // a 0-d x: out is value's one element
        return Ok(());
    }
    match x.as_slice() {
        Some(src) => dst.copy_from_slice(src),
        None => {
            let len = x.size(nd - 1);
            for (row, lane) in dst.chunks_exact_mut(len).zip(x.lanes(nd - 1)) {
                lane.copy_to(row);
            }
        }
    }
    if value.numel() == 0 {
        return Ok(()); // a count of 0 along some dim: nothing set
    }
    // out's C-order strides; a step of the region along dim d moves out by rstride[d]
    let mut rstride = vec![0isize; nd];
    let (mut base, mut acc) = (0isize, 1isize);
    for d in (0..nd).rev() {
        rstride[d] = steps[d] as isize * acc;
        base += starts[d] as isize * acc;
        acc *= x.size(d) as isize;
    }
    let last = nd - 1;
    let len = value.size(last);
    let rs = rstride[last];
    let mut at = vec![0usize; nd];
    let mut off = base;
    for lane in value.lanes(last) {
        let o = off as usize;
        if rs == 1 {
            lane.copy_to(&mut dst[o..o + len]);
        } else if rs > 0 {
            for (d, v) in dst[o..].iter_mut().step_by(rs as usize).zip(lane.iter()) {
                *d = v;
            }
        } else {
            // backwards: positions o, o - |rs|, ..., the lowest (o - (len - 1) * |rs|) last
            let step = rs.unsigned_abs();
            let lo = o - (len - 1) * step;
            for (d, v) in dst[lo..=o].iter_mut().rev().step_by(step).zip(lane.iter()) {
                *d = v;
            }
        }
        let mut d = last;
        while d > 0 {
            d -= 1;
            at[d] += 1;
            if at[d] < value.size(d) {
                off += rstride[d];
                break;
            }
            off -= rstride[d] * (value.size(d) as isize - 1);
            at[d] = 0;
        }
    }
    Ok(())
}
