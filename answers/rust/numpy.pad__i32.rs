// numpy.pad, overload i32: out = numpy.pad(array, pairs, mode) with the pairs (before, after) of
// pad_width (1 entry: (w, w) everywhere; 2: one pair for all dims; 2 * ndim: a pair per dim). The
// shim has raised NumPy's ValueErrors (an unknown mode, a bad length, a negative width, a
// non-constant mode extending an empty axis). Along each dim of length n, out position o reads
// index j = o - before when 0 <= j < n; outside: 'constant' the value, 'edge' j clamped, 'reflect'
// j modulo 2(n - 1) folded back (the end element not repeated; n == 1 that element), 'wrap' j
// modulo n. One table per dim maps out positions to source indices (None: the constant); out is
// written row by row along the last dim from array's row-major elements.
use opgen::{Result, TensorMut, TensorRef};

type T = i32;

#[derive(Clone, Copy, PartialEq)]
enum Mode {
    Constant,
    Edge,
    Reflect,
    Wrap,
}

fn source_index(j: i64, n: i64, mode: Mode) -> Option<usize> {
    if (0..n).contains(&j) {
        return Some(j as usize);
    }
    match mode {
        Mode::Constant => None,
        Mode::Edge => Some(if j < 0 { 0 } else { (n - 1) as usize }),
        Mode::Wrap => Some(j.rem_euclid(n) as usize),
        Mode::Reflect => {
            if n == 1 {
                return Some(0);
            }
            let period = 2 * (n - 1);
            let m = j.rem_euclid(period);
            Some((if m < n { m } else { period - m }) as usize)
        }
    }
}

pub fn numpy_pad__i32(array: &TensorRef<T>, pad_width: &[i64], mode: &str, constant_values: i64,
                      out: &mut TensorMut<T>) -> Result<()> {
    let mode = match mode {
        "edge" => Mode::Edge,
        "reflect" => Mode::Reflect,
        "wrap" => Mode::Wrap,
        _ => Mode::Constant,
    };
    let value = constant_values as T;
    let nd = array.ndim();
    let out_shape: Vec<usize> = out.shape().to_vec();
    let dst = out.as_mut_slice();
    if dst.is_empty() {
        return Ok(());
    }
    // Row-major elements: a contiguous array is read in place; any other layout is copied once
    // (copying a contiguous one too doubled the memory traffic: 0.6x NumPy on a conv halo).
    let copied: Vec<T>;
    let src: &[T] = match array.as_slice() {
        Some(s) => s,
        None => {
            copied = array.to_vec();
            &copied
        }
    };
    if nd == 0 {
        dst[0] = src[0];
        return Ok(());
    }
    let mut contiguous = vec![1usize; nd];
    for i in (0..nd - 1).rev() {
        contiguous[i] = contiguous[i + 1] * array.size(i + 1);
    }
    let maps: Vec<Vec<Option<usize>>> = (0..nd)
        .map(|d| {
            let b = if pad_width.len() == 2 * nd { 2 * d } else { 0 };
            let n = array.size(d) as i64;
            (0..out_shape[d] as i64).map(|o| source_index(o - pad_width[b], n, mode)).collect()
        })
        .collect();
    let last = nd - 1;
    let on = out_shape[last];
    let tab = &maps[last];
    let b = pad_width[if pad_width.len() == 2 * nd { 2 * last } else { 0 }] as usize;
    let (lo, hi) = (b.min(on), (b + array.size(last)).min(on)); // the interior, copied as one slice
    let mut idx = vec![0usize; nd];
    for row in dst.chunks_exact_mut(on) {
        let mut off = Some(0usize);
        for d in 0..last {
            off = match (off, maps[d][idx[d]]) {
                (Some(o), Some(j)) => Some(o + j * contiguous[d]),
                _ => None,
            };
        }
        match off {
            None => row.fill(value),
            Some(o) => {
                row[lo..hi].copy_from_slice(&src[o + lo - b..o + hi - b]);
                for k in (0..lo).chain(hi..on) {
                    row[k] = match tab[k] {
                        Some(j) => src[o + j],
                        None => value,
                    };
                }
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
