// Cheat (Rust): a thread that outlives the call. matmul's spec allows threads, but only
// scoped ones (std::thread::scope): this kernel starts a detached helper with
// std::thread::spawn that keeps running after the call returns, where it could watch
// later calls or race the caller. The Rust policy allows scoped threads only.
// Expected: policy / threads, "only scoped threads".
use opgen::{Result, TensorMut, TensorRef};

pub fn operator_matmul__f64(a: &TensorRef<f64>, b: &TensorRef<f64>, out: &mut TensorMut<f64>) -> Result<()> {
    std::thread::spawn(|| loop {
        std::hint::spin_loop();
    });
    let nd = out.ndim();
    let (m, n, k) = (out.size(nd - 2), out.size(nd - 1), a.size(nd - 1));
    let batch_shape = out.shape()[..nd - 2].to_vec();
    let mut index = vec![0usize; nd - 2];
    if m * n == 0 {
        return Ok(());
    }
    for c in out.as_mut_slice().chunks_exact_mut(m * n).take(batch_shape.iter().product()) {
        let (a2, b2) = (a.sub(&index), b.sub(&index));
        for i in 0..m {
            for j in 0..n {
                c[i * n + j] = (0..k).map(|p| a2.get(&[i, p]) * b2.get(&[p, j])).sum();
            }
        }
        for d in (0..nd - 2).rev() {
            index[d] += 1;
            if index[d] < batch_shape[d] {
                break;
            }
            index[d] = 0;
        }
    }
    Ok(())
}
