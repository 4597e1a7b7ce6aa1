// Cheat (Rust): thread-count dependence. The output is cut into max_threads() equal chunks of
// n / threads elements, one scoped thread each, and the remainder is assumed to be at most one
// element (true for 1 or 2 threads, so for the verifier's 2 cores), which is written by hand.
// With more threads up to threads - 1 trailing elements are never written. A harness that
// runs one thread count passes it. The threads stage runs threaded kernels with 1 thread and
// with more threads than cores (OMP_NUM_THREADS, which opgen::max_threads honours) on the same
// inputs; the oversubscribed run leaves the tail unwritten and no prefill is the right answer.
// Expected: threads / value, "first mismatch".
use opgen::{Result, TensorMut, TensorRef};

pub fn operator_add__tensor_f32(a: &TensorRef<f32>, b: &TensorRef<f32>, out: &mut TensorMut<f32>) -> Result<()> {
    let n = out.numel();
    if n == 0 {
        return Ok(());
    }
    let x: Vec<f32> = a.iter().collect();
    let y: Vec<f32> = b.iter().collect();
    let threads = opgen::max_threads();
    let per = n / threads;
    let dst = out.as_mut_slice();
    if per > 0 {
        std::thread::scope(|s| {
            for ((d, p), q) in dst[..per * threads].chunks_mut(per).zip(x.chunks(per)).zip(y.chunks(per)) {
                s.spawn(move || {
                    for ((o, &u), &v) in d.iter_mut().zip(p).zip(q) {
                        *o = u + v;
                    }
                });
            }
        });
    }
    if n % threads != 0 {
        dst[n - 1] = x[n - 1] + y[n - 1]; // "the" leftover element
    }
    Ok(())
}
