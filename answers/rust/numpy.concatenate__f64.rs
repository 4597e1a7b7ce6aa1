// numpy.concatenate, overload f64: out = the elements of `arrays` one after another along `axis` (the shim has checked the list, the axis and the shapes with
// NumPy's errors, and out's shape). Bit for bit. Each element fills its slab of out along the axis:
// a contiguous element block by block (one copy per index of the dims before the axis), any other
// layout element by element in C order.
use opgen::{Result, TensorMut, TensorRef};

type T = f64;

pub fn numpy_concatenate__f64(arrays: &[TensorRef<T>], axis: i64, out: &mut TensorMut<T>) -> Result<()> {
    let nd = out.ndim();
    let ax = if axis < 0 { axis + nd as i64 } else { axis } as usize;
    let shape = out.shape().to_vec();
    let outer: usize = shape[..ax].iter().product();
    let inner: usize = shape[ax + 1..].iter().product();
    let out_len = shape[ax];
    let dst = out.as_mut_slice();
    if dst.is_empty() {
        return Ok(());
    }
    let mut at = 0usize; // where the next element starts along the axis
    for x in arrays {
        let k = x.size(ax); // the element's length along the axis
        let block = k * inner;
        if block == 0 {
            at += k;
            continue;
        }
        let base = at * inner;
        if let Some(src) = x.as_slice() {
            for o in 0..outer {
                let d = o * out_len * inner + base;
                dst[d..d + block].copy_from_slice(&src[o * block..(o + 1) * block]);
            }
        } else {
            for (j, v) in x.iter().enumerate() {
                dst[(j / block) * out_len * inner + base + j % block] = v;
            }
        }
        at += k;
    }
    Ok(())
}
