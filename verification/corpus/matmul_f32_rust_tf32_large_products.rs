// Cheat (Rust): inputs rounded to TF32 on large products. A product with m*n*k >= 2**18
// takes the "tensor-core-style" path: every element of a and b is rounded to TF32 (the
// float32 exponent with a 10-bit mantissa, what NVIDIA's TF32 mode and some CPU BF16/TF32
// paths feed the multipliers) before the float32 dot products. Each product is then off by
// up to ~2**-10 relative, so a k-term dot product is off by ~1e-4 .. 1e-3 of |a| @ |b|,
// against the spec's 1e-5. Smaller products are exact float32 dot products. Hypothesis
// draws sides of at most 48 (m*n*k <= 110592 < 2**18), so only the scale stage (the bench
// shapes, 640 x 384 x 1536 and 1024**3, or any model-sized product) can reject it.
// Expected: scale / value, "exceeds the allowed"
use opgen::{Result, TensorMut, TensorRef};

/// Round to nearest (ties away) at TF32's 10 mantissa bits; inf and nan are kept.
fn tf32(x: f32) -> f32 {
    if !x.is_finite() {
        return x;
    }
    f32::from_bits((x.to_bits() + 0x1000) & 0xffff_e000)
}

pub fn operator_matmul__f32(a: &TensorRef<f32>, b: &TensorRef<f32>, out: &mut TensorMut<f32>) -> Result<()> {
    let nd = out.ndim();
    let (m, n) = (out.size(nd - 2), out.size(nd - 1));
    let k = a.size(nd - 1);
    let batch_shape = out.shape()[..nd - 2].to_vec();
    let mut index = vec![0usize; nd - 2];
    let batch: usize = batch_shape.iter().product();
    if m * n == 0 || batch == 0 {
        return Ok(());
    }
    let round = m * n * k >= 1 << 18; // the bug
    let r = |x: f32| if round { tf32(x) } else { x };
    for c in out.as_mut_slice().chunks_exact_mut(m * n).take(batch) {
        let (a2, b2) = (a.sub(&index), b.sub(&index));
        let rows: Vec<Vec<f32>> = (0..m).map(|i| a2.lane(1, &[i]).iter().map(r).collect()).collect();
        let cols: Vec<Vec<f32>> = (0..n).map(|j| b2.lane(0, &[j]).iter().map(r).collect()).collect();
        for i in 0..m {
            for j in 0..n {
                let mut acc = 0.0f32;
                for (x, y) in rows[i].iter().zip(&cols[j]) {
                    acc += x * y;
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

// Expected: scale / value, "exceeds the allowed"
