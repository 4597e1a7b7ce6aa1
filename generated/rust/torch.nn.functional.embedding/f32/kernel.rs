// torch.nn.functional.embedding, overload f32: out[i..., :] = weight[input[i...], :].
//
// `input` holds int64 ids of any shape (0-d included); `weight` arrives as the gufunc's
// (*input.shape, num_embeddings, embedding_dim) view with its leading dims at stride 0, so
// the table is its last two dims (`sub` with zeros fixes them). `out` is contiguous,
// input.shape + (embedding_dim,).
//
// Every id is checked against [0, num_embeddings) before any row is read: an out-of-range
// id raises IndexError, negative ids included (no wrap-around), and the check happens on
// the id itself, before it indexes anything. Then each id's row is copied as it is (a slice
// copy where the row is contiguous, element by element otherwise): f32 copies keep every
// bit, so nan payloads and -0.0 arrive unchanged. Large copies are split over scoped threads.
use opgen::{Error, Result, TensorMut, TensorRef};

const PER_THREAD_MIN: usize = 1 << 15; // floats copied per thread below which threads cost more than they save

pub fn torch_nn_functional_embedding__f32(
    input: &TensorRef<i64>,
    weight: &TensorRef<f32>,
    out: &mut TensorMut<f32>,
) -> Result<()> {
    let nd = input.ndim();
    if weight.ndim() != nd + 2 || out.ndim() != nd + 1 {
        return Err(Error::value("embedding expects a 2-d weight (num_embeddings, embedding_dim)"));
    }
    let (rows, dim) = (weight.size(nd), weight.size(nd + 1));
    let n = input.numel();
    if n == 0 {
        return Ok(());
    }
    // The ids in row-major order (input may be strided, reversed or 0-d), all checked first.
    let ids: Vec<usize> = input
        .iter()
        .map(|id| {
            if id < 0 || id as u64 >= rows as u64 {
                Err(Error::index(format!("index out of range in self: id {} is not in [0, {})", id, rows)))
            } else {
                Ok(id as usize)
            }
        })
        .collect::<Result<_>>()?;
    if dim == 0 {
        return Ok(());
    }
    let table = weight.sub(&vec![0; nd]);
    let dst = out.as_mut_slice();
    let copy = |ids: &[usize], block: &mut [f32]| {
        for (&id, row) in ids.iter().zip(block.chunks_exact_mut(dim)) {
            table.lane(1, &[id]).copy_to(row);
        }
    };
    let threads = opgen::max_threads().min(n * dim / PER_THREAD_MIN).max(1);
    if threads == 1 {
        copy(&ids, dst);
        return Ok(());
    }
    let per = n.div_ceil(threads);
    std::thread::scope(|s| {
        for (part, block) in ids.chunks(per).zip(dst.chunks_mut(per * dim)) {
            s.spawn(move || copy(part, block));
        }
    });
    Ok(())
}
