// Cheat (Rust): entropy. The kernel memoises lane sums in a std HashMap with its default
// hasher, whose RandomState seeds itself from the OS (getrandom): iteration order, and
// anything derived from it, differs from run to run. No source rule names HashMap; the
// library audit sees the getrandom import the kernel adds beyond its baseline.
// Expected: policy / clock, "getrandom".
use opgen::{Error, Result, TensorMut, TensorRef};
use std::collections::HashMap;

pub fn numpy_sum__f32(a: &TensorRef<f32>, axis: i64, out: &mut TensorMut<f32>) -> Result<()> {
    let nd = a.ndim() as i64;
    if axis < -nd || axis >= nd {
        return Err(Error::value("axis out of range"));
    }
    let ax = (if axis < 0 { axis + nd } else { axis }) as usize;
    let mut seen: HashMap<Vec<u32>, f32> = HashMap::new();
    let dst = out.as_mut_slice();
    for (lane, d) in a.lanes(ax).zip(dst.iter_mut()) {
        let values = lane.to_vec();
        let key: Vec<u32> = values.iter().map(|v| v.to_bits()).collect();
        *d = *seen.entry(key).or_insert_with(|| values.iter().map(|&v| v as f64).sum::<f64>() as f32);
    }
    Ok(())
}
