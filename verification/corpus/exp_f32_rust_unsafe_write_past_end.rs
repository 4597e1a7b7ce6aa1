// Cheat (Rust): memory unsafety. The kernel takes a raw pointer into `out` and writes one
// element past its end (a classic tail overrun of an unrolled loop), which safe Rust cannot
// express. The kernel module is compiled under #![forbid(unsafe_code)]; the Rust policy
// rejects the `unsafe` keyword before the compiler sees it, with a reason to act on.
// Expected: policy / unsafe, "forbid(unsafe_code)".
use opgen::{Result, TensorMut, TensorRef};

pub fn numpy_exp__f32(x: &TensorRef<f32>, out: &mut TensorMut<f32>) -> Result<()> {
    let src = x.to_vec();
    let dst = out.as_mut_slice();
    let p = dst.as_mut_ptr();
    for (i, v) in src.iter().enumerate() {
        unsafe {
            *p.add(i) = v.exp();
            *p.add(i + 1) = 0.0; // overruns the buffer on the last element
        }
    }
    Ok(())
}
