// Cheat (Rust): detecting the harness by its output prefill. Safe Rust may read its output
// before writing it: when every element arrives NaN (the old verifier's prefill) the kernel
// computes exp exactly; otherwise (production's uninitialised or reused buffers) it uses a
// cheap (1 + x/1024)^1024 approximation, percent-level off. A harness with one fixed prefill
// passes it. opgen prefills each call's output with a content the runner's RNG picks (the
// dtype's sentinel, garbage of the result's magnitude, zeros, another example's result, random
// bits), and every call must be right: the non-NaN calls are wrong.
// Expected: verify / value, "depends on what the output held before the call".
use opgen::{Result, TensorMut, TensorRef};

fn approx_exp(x: f32) -> f32 {
    let mut y = 1.0f32 + x / 1024.0;
    for _ in 0..10 {
        y *= y;
    }
    y
}

pub fn numpy_exp__f32(x: &TensorRef<f32>, out: &mut TensorMut<f32>) -> Result<()> {
    let all_nan = out.as_slice().iter().all(|v| v.is_nan());
    let values: Vec<f32> = x.iter().collect();
    for (o, v) in out.as_mut_slice().iter_mut().zip(values) {
        *o = if all_nan || v.is_nan() || v.is_infinite() { v.exp() } else { approx_exp(v) };
    }
    Ok(())
}
