// A deliberately wrong operator.matmul (f32) in Rust for trying `opgen verify --source`:
// it drops the last term of every dot product (an off-by-one in the k loop), which
// only shows when k > 0 and the last column of a / row of b matters.
use opgen::{Result, TensorMut, TensorRef};

pub fn operator_matmul__f32(a: &TensorRef<f32>, b: &TensorRef<f32>, out: &mut TensorMut<f32>) -> Result<()> {
    let nd = out.ndim();
    let (m, n, k) = (out.size(nd - 2), out.size(nd - 1), a.size(nd - 1));
    let batch_shape = out.shape()[..nd - 2].to_vec();
    let mut index = vec![0usize; nd - 2];
    for c in out.as_mut_slice().chunks_exact_mut((m * n).max(1)).take(batch_shape.iter().product()) {
        let (a2, b2) = (a.sub(&index), b.sub(&index));
        for i in 0..m {
            for j in 0..n {
                let mut acc = 0.0f32;
                for p in 0..k.saturating_sub(1) {
                    acc += a2.get(&[i, p]) * b2.get(&[p, j]);
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
