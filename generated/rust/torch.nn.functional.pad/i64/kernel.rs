// torch.nn.functional.pad, overload i64, mode 'constant': pad holds (before, after) pairs from the
// last dim backwards; a negative entry crops. The shim has raised torch's errors (odd length, too
// many pairs, a crop past a dim's length) and allocated out. Along each dim, out position o reads
// input's o - before where that is inside input, else the value; out is written row by row along the
// last dim from input's row-major copy: the value where an outer dim is outside, else the left
// border, the interior as one slice and the right border.
use opgen::{Error, Result, TensorMut, TensorRef};

type T = i64;

pub fn torch_nn_functional_pad__i64(input: &TensorRef<T>, pad: &[i64], mode: &str, value: f64,
                                    out: &mut TensorMut<T>) -> Result<()> {
    if mode != "constant" {
        return Err(Error::value(format!("mode '{}': only 'constant' is this op's", mode)));
    }
    let fill = value as T;
    let nd = input.ndim();
    let out_shape: Vec<usize> = out.shape().to_vec();
    let dst = out.as_mut_slice();
    if dst.is_empty() {
        return Ok(());
    }
    // Row-major elements: a contiguous input is read in place; any other layout is copied once.
    let copied: Vec<T>;
    let src: &[T] = match input.as_slice() {
        Some(s) => s,
        None => {
            copied = input.to_vec();
            &copied
        }
    };
    if nd == 0 {
        dst[0] = src[0];
        return Ok(());
    }
    let mut before = vec![0i64; nd];
    for k in 0..pad.len() / 2 {
        before[nd - 1 - k] = pad[2 * k];
    }
    let mut contiguous = vec![1usize; nd];
    for i in (0..nd - 1).rev() {
        contiguous[i] = contiguous[i + 1] * input.size(i + 1);
    }
    let last = nd - 1;
    let (n, on, b) = (input.size(last) as i64, out_shape[last] as i64, before[last]);
    let (lo, hi) = (b.clamp(0, on) as usize, (b + n).clamp(0, on) as usize); // the interior [lo, hi)
    let mut idx = vec![0usize; nd];
    for row in dst.chunks_exact_mut(on as usize) {
        let mut off = Some(0usize);
        for d in 0..last {
            let j = idx[d] as i64 - before[d];
            off = match off {
                Some(o) if j >= 0 && j < input.size(d) as i64 => Some(o + j as usize * contiguous[d]),
                _ => None,
            };
        }
        match off {
            None => row.fill(fill),
            Some(o) => {
                row[..lo].fill(fill);
                let start = (o as i64 + lo as i64 - b) as usize;
                row[lo..hi].copy_from_slice(&src[start..start + (hi - lo)]);
                row[hi..].fill(fill);
            }
        }
        for d in (0..last).rev() {
            // the next row: an odometer over the outer dims
            idx[d] += 1;
            if idx[d] < out_shape[d] {
                break;
            }
            idx[d] = 0;
        }
    }
    Ok(())
}
