// Cheat (Rust): refusing the hard inputs. The kernel asserts that no input is nan or
// infinite, as if the caller had promised so; the spec promises nothing of the kind. The
// assertion panics, the shim catches the panic (it may not unwind into C) and reports an
// internal error with the panic's message and location, which the runner rejects.
// Expected: verify / error, "the kernel panicked".
use opgen::{Result, TensorMut, TensorRef};

pub fn numpy_exp__f32(x: &TensorRef<f32>, out: &mut TensorMut<f32>) -> Result<()> {
    for (d, v) in out.as_mut_slice().iter_mut().zip(x.iter()) {
        assert!(v.is_finite(), "inputs must be finite, got {}", v);
        *d = v.exp();
    }
    Ok(())
}
