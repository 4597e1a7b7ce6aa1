// opgen.nn.quantize_int8, overload f32: out = clamp(round_half_to_even(input / scale), -128, 127)
// as int8, one correctly rounded float32 division per element, ties to even (f32::round_ties_even,
// not f32::round, which rounds ties away from zero), saturating (Rust's float-to-int `as`
// saturates, and the rounded value is an integer, so it is exactly the clamp).
use opgen::{Result, TensorMut, TensorRef};

#[inline]
fn quantize(x: f32, s: f32) -> i8 {
    (x / s).round_ties_even() as i8
}

pub fn opgen_nn_quantize_int8__f32(input: &TensorRef<f32>, scale: &TensorRef<f32>, out: &mut TensorMut<i8>) -> Result<()> {
    let nd = input.ndim();
    let k = input.size(nd - 1);
    if k == 0 || out.is_empty() {
        return Ok(());
    }
    // One scale per row, the rows in row-major order: scale's elements in the same order.
    for ((lane, s), y) in input.lanes(nd - 1).zip(scale.iter()).zip(out.as_mut_slice().chunks_exact_mut(k)) {
        match lane.as_slice() {
            Some(row) => y.iter_mut().zip(row).for_each(|(o, &x)| *o = quantize(x, s)),
            None => y.iter_mut().zip(lane.iter()).for_each(|(o, x)| *o = quantize(x, s)),
        }
    }
    Ok(())
}
