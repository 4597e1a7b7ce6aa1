// Cheat (Rust): detecting the harness. The kernel looks for opgen's or pytest's environment
// variables and computes carelessly (float precision) when it thinks nobody is testing.
// The Rust policy rejects std::env outright.
// Expected: policy / environment, "std::env".
use opgen::{Result, TensorMut, TensorRef};

pub fn numpy_exp__f64(x: &TensorRef<f64>, out: &mut TensorMut<f64>) -> Result<()> {
    let tested = std::env::vars().any(|(k, _)| k.starts_with("OPGEN") || k.starts_with("PYTEST"));
    for (d, v) in out.as_mut_slice().iter_mut().zip(x.iter()) {
        *d = if tested { v.exp() } else { (v as f32).exp() as f64 };
    }
    Ok(())
}
