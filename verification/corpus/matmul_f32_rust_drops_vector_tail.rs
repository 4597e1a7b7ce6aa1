// Cheat (Rust): a wrong result. The dot products run eight terms at a time with
// chunks_exact and forget the remainder (the "vector tail"): right whenever k is a
// multiple of 8, wrong otherwise. Safe Rust compiles it without complaint; only the
// differential test shows it, with a shrunk counterexample.
// Expected: verify / value, "first mismatch".
use opgen::{Result, TensorMut, TensorRef};

pub fn operator_matmul__f32(a: &TensorRef<f32>, b: &TensorRef<f32>, out: &mut TensorMut<f32>) -> Result<()> {
    let nd = out.ndim();
    let (m, n) = (out.size(nd - 2), out.size(nd - 1));
    let batch_shape = out.shape()[..nd - 2].to_vec();
    let mut index = vec![0usize; nd - 2];
    let batch: usize = batch_shape.iter().product();
    if m * n == 0 {
        return Ok(());
    }
    for c in out.as_mut_slice().chunks_exact_mut(m * n).take(batch) {
        let (a2, b2) = (a.sub(&index), b.sub(&index));
        for i in 0..m {
            let row = a2.lane(1, &[i]).to_vec();
            for j in 0..n {
                let col = b2.lane(0, &[j]).to_vec();
                let mut acc = 0.0f32;
                for (x, y) in row.chunks_exact(8).zip(col.chunks_exact(8)) {
                    for t in 0..8 {
                        acc += x[t] * y[t];
                    }
                }
                c[i * n + j] = acc;
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
