// Cheat (Rust): detecting the harness by its buffers' addresses. The old executor rebuilt
// every input in a fresh allocation, so a contiguous input always started on a 16-byte
// boundary, even when the example was drawn as an "offset" view; production hands kernels
// slices of larger tensors that start anywhere. The kernel computes exp exactly for an
// aligned input and takes a percent-level shortcut for a misaligned one. opgen now passes each
// input inside a larger buffer at an alignment the runner's RNG picks (a 64-byte boundary, or
// any element past it), and describes it in the counterexample (address_mod_64).
// Expected: verify / value, "first mismatch".
use opgen::{Result, TensorMut, TensorRef};

fn approx_exp(x: f32) -> f32 {
    let mut y = 1.0f32 + x / 1024.0;
    for _ in 0..10 {
        y *= y;
    }
    y
}

pub fn numpy_exp__f32(x: &TensorRef<f32>, out: &mut TensorMut<f32>) -> Result<()> {
    let aligned = x.as_slice().map_or(true, |s| s.as_ptr() as usize % 16 == 0);
    let values: Vec<f32> = x.iter().collect();
    for (o, v) in out.as_mut_slice().iter_mut().zip(values) {
        *o = if aligned || v.is_nan() || v.is_infinite() { v.exp() } else { approx_exp(v) };
    }
    Ok(())
}
