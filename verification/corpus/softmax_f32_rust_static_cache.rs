// Cheat (Rust): state kept between calls. A static Mutex remembers the last input and its
// softmax and answers a repeated input from memory (the harness calls candidate, reference,
// candidate with fresh buffers to catch exactly this). Safe Rust allows such statics; the
// Rust policy does not: statics may hold plain constant data only.
// Expected: policy / global-state, "state kept between calls".
use opgen::{Result, TensorMut, TensorRef};
use std::sync::Mutex;

static LAST: Mutex<Option<(Vec<f32>, Vec<f32>)>> = Mutex::new(None);

pub fn torch_nn_functional_softmax__f32(x: &TensorRef<f32>, dim: i64, out: &mut TensorMut<f32>) -> Result<()> {
    let input = x.to_vec();
    if let Some((seen, answer)) = LAST.lock().unwrap().as_ref() {
        if *seen == input && answer.len() == out.numel() {
            out.as_mut_slice().copy_from_slice(answer);
            return Ok(());
        }
    }
    let nd = x.ndim() as i64;
    let ax = (if dim < 0 { dim + nd } else { dim }) as usize;
    for (lane, mut o) in x.lanes(ax).zip(out.lanes_mut(ax)) {
        let v = lane.to_vec();
        let m = v.iter().fold(f32::NEG_INFINITY, |m, &e| if e > m { e } else { m });
        let e: Vec<f64> = v.iter().map(|&e| ((e - m) as f64).exp()).collect();
        let s: f64 = e.iter().sum();
        for (i, e) in e.iter().enumerate() {
            o.set(i, (e / s) as f32);
        }
    }
    *LAST.lock().unwrap() = Some((input, out.as_slice().to_vec()));
    Ok(())
}
