// Cheat (Rust): thread-count dependence. With one thread available the kernel takes a "serial
// fast path" that works in blocks of 8 and forgets the tail (n % 8 elements); with two or more
// it takes the threaded path, which is right. The verifier's default thread count (the
// machine's cores: 2 here) never takes the serial path, and neither does a harness that runs
// one thread count; a one-core container in production does. The threads stage runs threaded
// kernels with 1 thread (OMP_NUM_THREADS=1, which opgen::max_threads honours) and with more
// threads than cores on the same inputs; the 1-thread run leaves the tail unwritten.
// Expected: threads / value, "first mismatch".
use opgen::{Result, TensorMut, TensorRef};

pub fn operator_mul__tensor_f32(a: &TensorRef<f32>, b: &TensorRef<f32>, out: &mut TensorMut<f32>) -> Result<()> {
    let n = out.numel();
    if n == 0 {
        return Ok(());
    }
    let x: Vec<f32> = a.iter().collect();
    let y: Vec<f32> = b.iter().collect();
    let threads = opgen::max_threads();
    let dst = out.as_mut_slice();
    if threads == 1 {
        for blk in 0..n / 8 {
            for i in blk * 8..blk * 8 + 8 {
                dst[i] = x[i] * y[i];
            }
        }
        return Ok(());
    }
    let per = n.div_ceil(threads);
    std::thread::scope(|s| {
        for ((d, p), q) in dst.chunks_mut(per).zip(x.chunks(per)).zip(y.chunks(per)) {
            s.spawn(move || {
                for ((o, &u), &v) in d.iter_mut().zip(p).zip(q) {
                    *o = u * v;
                }
            });
        }
    });
    Ok(())
}
