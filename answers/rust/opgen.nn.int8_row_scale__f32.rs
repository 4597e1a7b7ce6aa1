// opgen.nn.int8_row_scale, overload f32: out[...] = max_p |input[..., p]| / 127 in float32 (one
// correctly rounded division), 1.0 where that quotient is 0 (all-zero, empty or tiny rows). The
// maximum of magnitudes is exact, so any order of comparison gives the same bits.
use opgen::{Result, TensorMut, TensorRef};

fn scale_of(max_abs: f32) -> f32 {
    let q = max_abs / 127.0f32;
    if q == 0.0 { 1.0 } else { q }
}

pub fn opgen_nn_int8_row_scale__f32(input: &TensorRef<f32>, out: &mut TensorMut<f32>) -> Result<()> {
    let nd = input.ndim();
    let k = input.size(nd - 1);
    let y = out.as_mut_slice();
    if k == 0 {
        y.fill(1.0); // an empty row's largest magnitude is 0
        return Ok(());
    }
    for (lane, o) in input.lanes(nd - 1).zip(y.iter_mut()) {
        let m = match lane.as_slice() {
            // Finite inputs: the magnitude's bits order as the magnitudes do (-0.0 is 0).
            Some(row) => row.iter().fold(0u32, |m, &x| m.max(x.to_bits() & 0x7fff_ffff)),
            None => lane.iter().fold(0u32, |m, x| m.max(x.to_bits() & 0x7fff_ffff)),
        };
        *o = scale_of(f32::from_bits(m));
    }
    Ok(())
}
