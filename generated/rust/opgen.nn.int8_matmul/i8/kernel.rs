// opgen.nn.int8_matmul, overload i8: out[..., j] = sum_p int32(input[..., p]) * int32(weight[..., j, p]),
// exactly, in int32 (every product widened before it is summed: no int16 pair sums). The spec's
// contract (k <= 131071) keeps every sum inside int32; wrapping_add only spells that out.
// Rows and weight rows are made contiguous once, so the dot products run over slices, which the
// compiler vectorizes (sign-extend, multiply, add in 32-bit lanes).
use opgen::{Result, TensorMut, TensorRef};

fn dot(x: &[i8], w: &[i8]) -> i32 {
    x.iter().zip(w).fold(0i32, |acc, (&a, &b)| acc.wrapping_add(a as i32 * b as i32))
}

// Calls f with every index of `shape` in row-major order (once, with no index, for a 0-d shape).
fn for_each_index(shape: &[usize], mut f: impl FnMut(&[usize])) {
    if shape.iter().any(|&n| n == 0) {
        return;
    }
    let mut idx = vec![0usize; shape.len()];
    loop {
        f(&idx);
        let mut d = shape.len();
        loop {
            if d == 0 {
                return;
            }
            d -= 1;
            idx[d] += 1;
            if idx[d] < shape[d] {
                break;
            }
            idx[d] = 0;
        }
    }
}

pub fn opgen_nn_int8_matmul__i8(input: &TensorRef<i8>, weight: &TensorRef<i8>, out: &mut TensorMut<i32>) -> Result<()> {
    let nd = out.ndim();
    let n = out.size(nd - 1);
    let k = input.size(input.ndim() - 1);
    if n == 0 || out.is_empty() {
        return Ok(());
    }
    let lead: Vec<usize> = out.shape()[..nd - 1].to_vec();
    let mut rows = out.as_mut_slice().chunks_exact_mut(n);
    // The weight is usually one matrix broadcast over the loop dims (stride 0): it is packed (its
    // rows contiguous) once, and again only where the loop moves its view.
    let mut packed: Vec<i8> = Vec::with_capacity(n * k);
    let mut packed_at: Option<isize> = None;
    let mut x_row = vec![0i8; k];
    for_each_index(&lead, |idx| {
        let y = rows.next().expect("out has one row per loop index");
        if k == 0 {
            y.fill(0);
            return;
        }
        let at: isize = idx.iter().zip(weight.strides()).map(|(&i, &s)| i as isize * s).sum();
        if packed_at != Some(at) {
            let w = weight.sub(idx);
            packed.clear();
            for j in 0..n {
                packed.extend(w.lane(1, &[j]).iter());
            }
            packed_at = Some(at);
        }
        input.sub(idx).lane(0, &[]).copy_to(&mut x_row);
        for (o, wj) in y.iter_mut().zip(packed.chunks_exact(k)) {
            *o = dot(&x_row, wj);
        }
    });
    Ok(())
}
