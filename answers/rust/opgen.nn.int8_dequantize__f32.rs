// opgen.nn.int8_dequantize, overload f32: out[..., j] = float32(acc[..., j]) * (input_scale[...] *
// weight_scale[..., j]) + bias[..., j], each step one correctly rounded float32 operation in the
// reference's order (no fused multiply-add), so the result matches it bit for bit.
use opgen::{Result, TensorMut, TensorRef};

pub fn opgen_nn_int8_dequantize__f32(
    acc: &TensorRef<i32>,
    input_scale: &TensorRef<f32>,
    weight_scale: &TensorRef<f32>,
    bias: &TensorRef<f32>,
    out: &mut TensorMut<f32>,
) -> Result<()> {
    let nd = out.ndim();
    let n = out.size(nd - 1);
    if n == 0 || out.is_empty() {
        return Ok(());
    }
    let a = acc.lanes(acc.ndim() - 1);
    let ws = weight_scale.lanes(weight_scale.ndim() - 1);
    let b = bias.lanes(bias.ndim() - 1);
    let mut ws_row = vec![0f32; n];
    let mut b_row = vec![0f32; n];
    let mut a_row = vec![0i32; n];
    for ((((a, s), w), bb), y) in a.zip(input_scale.iter()).zip(ws).zip(b).zip(out.as_mut_slice().chunks_exact_mut(n)) {
        a.copy_to(&mut a_row);
        w.copy_to(&mut ws_row);
        bb.copy_to(&mut b_row);
        for j in 0..n {
            let scale = s * ws_row[j];
            let p = a_row[j] as f32 * scale;
            y[j] = p + b_row[j];
        }
    }
    Ok(())
}
