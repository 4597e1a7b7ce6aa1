// numpy.dot, overload f32: out = numpy.dot(a, b) (NumPy 2).
//
// A 0-d operand: out[i] = s * x[i], x the other operand walked in row-major order (any strides), s the
// 0-d one's value. Otherwise, with K = a.shape[-1] the contracted length, M the product of a's other dims,
// NB the product of b's dims before its contracted one and N its last dim (1 when b is 1-D): a and b are
// copied into contiguous row-major vectors (a as M x K, b as NB x K x N, whatever their strides:
// transposed, reversed, stride 0), so out, contiguous of shape a.shape[:-1] + b.shape[:-2] +
// b.shape[-1:], is M x NB x N and out[m, j, n] = sum_p a[m, p] * b[j, p, n]. Each out row (m, j) is
// summed in an i-k-j loop into an accumulator row of N: for each p, acc[..] += a[m, p] * b[j, p, ..],
// a contiguous inner loop over slices. Acc is f64 for f32 (a more accurate order than f32's, which the
// spec allows; each result rounded once). Every product is summed (no skipping of zeros), so nan and
// inf propagate as in the plain loop (inf * 0 is nan). K == 0 gives zeros; an empty out has nothing to
// write.
use opgen::{Result, TensorMut, TensorRef};

type T = f32;
type Acc = f64;

fn widen(x: T) -> Acc {
    x as Acc
}

fn narrow(x: Acc) -> T {
    x as T
}

fn mul(x: Acc, y: Acc) -> Acc {
    x * y
}

fn add(x: Acc, y: Acc) -> Acc {
    x + y
}

pub fn numpy_dot__f32(a: &TensorRef<T>, b: &TensorRef<T>, out: &mut TensorMut<T>) -> Result<()> {
    let y = out.as_mut_slice();
    if y.is_empty() {
        return Ok(());
    }
    if a.ndim() == 0 || b.ndim() == 0 {
        // a scalar times an array: out has the array's shape
        let (s, x) = if a.ndim() == 0 { (a.item(), b) } else { (b.item(), a) };
        let s = widen(s);
        for (o, v) in y.iter_mut().zip(x.iter()) {
            *o = narrow(mul(s, widen(v)));
        }
        return Ok(());
    }
    let (na, nb) = (a.ndim(), b.ndim());
    let k = a.size(na - 1);
    let m: usize = a.shape()[..na - 1].iter().product();
    let n = if nb >= 2 { b.size(nb - 1) } else { 1 };
    let batches: usize = if nb > 2 { b.shape()[..nb - 2].iter().product() } else { 1 };
    if k == 0 {
        y.fill(T::default()); // an empty sum: zeros
        return Ok(());
    }
    let av = a.to_vec();
    let bv = b.to_vec();
    let mut acc = vec![Acc::default(); n];
    for mi in 0..m {
        let ar = &av[mi * k..(mi + 1) * k];
        for j in 0..batches {
            let bj = &bv[j * k * n..(j + 1) * k * n];
            acc.fill(Acc::default());
            for (p, &x) in ar.iter().enumerate() {
                let x = widen(x);
                let br = &bj[p * n..(p + 1) * n];
                for (c, &v) in acc.iter_mut().zip(br.iter()) {
                    *c = add(*c, mul(x, widen(v)));
                }
            }
            let row = (mi * batches + j) * n;
            for (o, &c) in y[row..row + n].iter_mut().zip(acc.iter()) {
                *o = narrow(c);
            }
        }
    }
    Ok(())
}
