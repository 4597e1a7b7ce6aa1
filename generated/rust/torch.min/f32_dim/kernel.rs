// torch.min, overload f32_dim: (values, indices) = torch.min(input, dim, keepdim), the smallest element along
// dim and its index.
//
// One pass per lane: the first smallest element wins (a later equal one, 0.0 against -0.0 included,
// does not replace it), and a nan is larger and smaller than everything: the first nan and its index are the result. The lanes come in row-major order of the other dims, which is
// the results' element order with or without the kept dim. The shim has checked dim; an empty lane
// raises IndexError in torch's words. Written by scripts/extreme_dim_kernels.py.
use opgen::{Error, Result, TensorMut, TensorRef};

type T = f32;

pub fn torch_min__f32_dim(input: &TensorRef<T>, dim: i64, keepdim: bool, values: &mut TensorMut<T>,
            indices: &mut TensorMut<i64>) -> Result<()> {
    let _ = keepdim; // the results' shapes carry it; their element order is the same
    let nd = input.ndim();
    if nd == 0 {
        values.set(&[], input.get(&[]));
        indices.set(&[], 0);
        return Ok(());
    }
    let ax = (if dim < 0 { dim + nd as i64 } else { dim }) as usize;
    if input.size(ax) == 0 {
        return Err(Error::index(format!("min(): Expected reduction dim {} to have non-zero size.", ax)));
    }
    if values.numel() == 0 {
        return Ok(());
    }
    let vo = values.as_mut_slice();
    let mut io_all = Vec::with_capacity(vo.len());
    for (lane, v_out) in input.lanes(ax).zip(vo.iter_mut()) {
        let mut best = lane.get(0);
        let mut at = 0usize;
        if !best.is_nan() {
            // a row starting with nan is decided
            for (j, v) in lane.iter().enumerate().skip(1) {
                if v.is_nan() {
                    // the first nan is the result
                    best = v;
                    at = j;
                    break;
                }
                if v < best {
                    best = v;
                    at = j;
                }
            }
        }
        *v_out = best;
        io_all.push(at as i64);
    }
    indices.as_mut_slice().copy_from_slice(&io_all);
    Ok(())
}
