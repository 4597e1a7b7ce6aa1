// torch.index_select, overload f32: out = torch.index_select(input, dim, index). The shim has
// raised torch's IndexErrors (the dim, a 2-d index, a count other than 1 for a 0-d input, an index
// into an empty dim, any index outside [0, n)) and hands a 0-d input as shape (1,), so every index
// is a valid row of dim. out is, for each position of the dims before dim and each index j, the
// slice input[pre, index[j], ...] in row-major order, copied as one slice from input's row-major
// elements (input itself where it is contiguous, else a copy of it).
use opgen::{Result, TensorMut, TensorRef};

type T = f32;

pub fn torch_index_select__f32(input: &TensorRef<T>, dim: i64, index: &TensorRef<i64>, out: &mut TensorMut<T>) -> Result<()> {
    let nd = input.ndim(); // at least 1: the shim made a 0-d input shape (1,)
    let ax = (if dim < 0 { dim + nd as i64 } else { dim }) as usize;
    let dst = out.as_mut_slice();
    if dst.is_empty() {
        return Ok(());
    }
    let copied;
    let src: &[T] = match input.as_slice() {
        Some(s) => s,
        None => {
            copied = input.to_vec();
            &copied
        }
    };
    let ids: Vec<usize> = index.iter().map(|v| v as usize).collect();
    let inner: usize = input.shape()[ax + 1..].iter().product();
    let n = input.size(ax);
    let mut chunks = dst.chunks_exact_mut(inner);
    for block in src.chunks_exact(n * inner) {
        for &id in &ids {
            if let Some(y) = chunks.next() {
                y.copy_from_slice(&block[id * inner..(id + 1) * inner]);
            }
        }
    }
    Ok(())
}
