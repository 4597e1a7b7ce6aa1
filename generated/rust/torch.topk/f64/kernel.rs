// torch.topk, overload f64: the k largest (or smallest) elements along dim and their indices.
//
// Each lane along dim is copied to a buffer (any input strides), then its indices are ordered by a
// strict total order: NaN larger than every number, then the value (largest first when `largest`,
// else smallest first), then the index (the lower first: ties as the spec fixes them; 0.0 and -0.0
// compare equal and so tie). select_nth_unstable_by puts the first k in front (O(n)), and sorting
// those k orders them; `sorted` false gives the same order (the spec fixes it). The three tensors'
// lanes are walked together, the other dims in row-major order. A 0-d input has one element: it
// and index 0.
use opgen::{Result, TensorMut, TensorRef};
use std::cmp::Ordering;

type T = f64;

fn order(a: T, i: usize, b: T, j: usize, largest: bool) -> Ordering {
    let (an, bn) = (a.is_nan(), b.is_nan());
    if an || bn {
        if an && bn {
            return i.cmp(&j);
        }
        // NaN is the largest: first when largest, last otherwise
        return if an == largest { Ordering::Less } else { Ordering::Greater };
    }
    if a != b {
        let first = if largest { a > b } else { a < b };
        return if first { Ordering::Less } else { Ordering::Greater };
    }
    i.cmp(&j)
}

pub fn torch_topk__f64(input: &TensorRef<f64>, k: i64, dim: i64, largest: bool, sorted: bool,
                       values: &mut TensorMut<f64>, indices: &mut TensorMut<i64>) -> Result<()> {
    let _ = sorted; // the spec fixes one order either way
    let nd = input.ndim();
    if nd == 0 {
        values.set(&[], input.get(&[]));
        indices.set(&[], 0);
        return Ok(());
    }
    let ax = (if dim < 0 { dim + nd as i64 } else { dim }) as usize;
    let k = k as usize;
    let n = input.size(ax);
    if k == 0 {
        return Ok(());
    }
    let mut row: Vec<T> = vec![0.0; n];
    let mut idx: Vec<usize> = (0..n).collect();
    let lanes = input.lanes(ax).zip(values.lanes_mut(ax)).zip(indices.lanes_mut(ax));
    for ((src, mut vl), mut il) in lanes {
        src.copy_to(&mut row);
        for (j, v) in idx.iter_mut().enumerate() {
            *v = j;
        }
        let cmp = |a: &usize, b: &usize| order(row[*a], *a, row[*b], *b, largest);
        if k < n {
            idx.select_nth_unstable_by(k - 1, cmp);
        }
        idx[..k].sort_unstable_by(cmp);
        for (j, &i) in idx[..k].iter().enumerate() {
            vl.set(j, row[i]);
            il.set(j, i as i64);
        }
    }
    Ok(())
}
