// Cheat (Rust): threads where the spec allows none, and one that outlives the call: the
// kernel computes on a detached std::thread::spawn and waits with a timeout-free join.
// operator.pow's spec allows no threads, so any std::thread path is rejected.
// Expected: policy / threads, "does not allow threads".
use opgen::{Error, Result};

pub fn operator_pow__float(a: f64, b: f64) -> Result<f64> {
    let worker = std::thread::spawn(move || a.powf(b));
    let r = worker.join().map_err(|_| Error::internal("worker died"))?;
    if r.is_infinite() && a.is_finite() && b.is_finite() {
        return Err(Error::overflow("result out of range"));
    }
    Ok(r)
}
