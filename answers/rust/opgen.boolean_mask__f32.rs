// opgen.boolean_mask, overload f32: (values, count) = (x[mask], len(x[mask])), NumPy's boolean-mask indexing.
//
// mask covers x's first k = mask.ndim dims (the shim has checked the shapes). The rows of x are its
// elements over those dims, each a block of prod(x.shape[k:]) elements. The mask is read once in C
// order; for each true element the row of x at the same leading index is copied (in C order, any
// strides) into the next row of values, which the caller allocated at the bound mask.numel() rows.
// count gets the number of rows written; nothing past it is written.
use opgen::{Result, TensorMut, TensorRef};

pub fn opgen_boolean_mask__f32(x: &TensorRef<f32>, mask: &TensorRef<bool>, values: &mut TensorMut<f32>,
                               count: &mut TensorMut<i64>) -> Result<()> {
    let k = mask.ndim();
    let lead: Vec<usize> = mask.shape().to_vec();
    let inner: usize = x.shape()[k..].iter().product();
    let dst = values.as_mut_slice();
    let mut at = vec![0usize; k];
    let mut kept = 0usize;
    for keep in mask.iter() {
        if keep {
            let row = &mut dst[kept * inner..(kept + 1) * inner];
            match x.sub(&at).as_slice() {
                Some(src) => row.copy_from_slice(src),
                None => {
                    for (d, v) in row.iter_mut().zip(x.sub(&at).iter()) {
                        *d = v;
                    }
                }
            }
            kept += 1;
        }
        // the next leading index, in C order
        for d in (0..k).rev() {
            at[d] += 1;
            if at[d] < lead[d] {
                break;
            }
            at[d] = 0;
        }
    }
    count.as_mut_slice()[0] = kept as i64;
    Ok(())
}
