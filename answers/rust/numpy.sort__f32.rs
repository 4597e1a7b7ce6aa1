// numpy.sort, overload f32: numpy.sort(a, axis=axis, kind="stable").
//
// Each lane along the axis is gathered into a buffer of order-preserving unsigned keys
// (the float's bits, negatives inverted, -0.0 read as 0.0, every nan the largest key),
// paired with the element itself, and sorted by a least-significant-digit radix sort
// over bytes: every pass is a stable counting sort, so equal keys keep their input order and the
// whole sort is stable. Passes whose byte is the same in every key are skipped (one histogram
// pass counts all bytes first). Lanes of up to 32 elements use an insertion sort instead (it
// moves an element only past strictly greater keys: stable too). out is contiguous with a's
// shape; lanes are walked with the runtime's lane iterators (strided lanes gathered first). Any
// input strides, 0-size dims; kind is "stable" or "mergesort", anything else is a ValueError.
use opgen::{Error, Result, TensorMut, TensorRef};

type T = f32; // the element type
type U = u32; // its key
type P = f32; // what travels with a key
type R = f32; // the result's element type
const TOP: U = 1 << (8 * std::mem::size_of::<U>() - 1);

// -0.0 reads as 0.0 (they tie); every nan is the largest key (after +inf; ties keep their order).
#[inline(always)]
fn key_of(x: T) -> U {
    if x != x {
        return U::MAX;
    }
    let b = if x == 0.0 { 0 } else { x.to_bits() };
    if b & TOP != 0 { !b } else { b | TOP }
}
#[inline(always)]
fn payload(x: T, _i: usize) -> P {
    x // the element itself: -0.0 and nan bits are kept exactly
}
#[inline(always)]
fn result(_k: U, p: P) -> R {
    p
}

// Sorts (k, p) stably by k, using (k2, p2) as scratch; returns whether the result ended up in
// the scratch buffers.
fn sort_lane(k: &mut [U], p: &mut [P], k2: &mut [U], p2: &mut [P]) -> bool {
    let n = k.len();
    if n <= 32 {
        for i in 1..n {
            let (kk, pp) = (k[i], p[i]);
            let mut j = i;
            while j > 0 && k[j - 1] > kk {
                k[j] = k[j - 1];
                p[j] = p[j - 1];
                j -= 1;
            }
            k[j] = kk;
            p[j] = pp;
        }
        return false;
    }
    const BYTES: usize = std::mem::size_of::<U>();
    let mut cnt = [[0usize; 256]; BYTES];
    for &v in k.iter() {
        for (b, c) in cnt.iter_mut().enumerate() {
            c[((v >> (8 * b)) & 0xFF) as usize] += 1;
        }
    }
    let (mut sk, mut sp, mut dk, mut dp) = (k, p, k2, p2);
    let mut swapped = false;
    for (b, c) in cnt.iter_mut().enumerate() {
        if c[((sk[0] >> (8 * b)) & 0xFF) as usize] == n {
            continue; // one digit everywhere
        }
        let mut sum = 0usize;
        for d in c.iter_mut() {
            let t = *d;
            *d = sum;
            sum += t;
        }
        for i in 0..n {
            let v = sk[i];
            let slot = &mut c[((v >> (8 * b)) & 0xFF) as usize];
            let at = *slot;
            *slot += 1;
            dk[at] = v;
            dp[at] = sp[i];
        }
        std::mem::swap(&mut sk, &mut dk);
        std::mem::swap(&mut sp, &mut dp);
        swapped = !swapped;
    }
    swapped
}

pub fn numpy_sort__f32(a: &TensorRef<f32>, axis: i64, kind: &str, out: &mut TensorMut<f32>) -> Result<()> {
    if kind != "stable" && kind != "mergesort" {
        return Err(Error::value(format!(
            "sort kind must be 'stable' or 'mergesort' (this op is the stable sort), got {:?}",
            kind
        )));
    }
    let nd = a.ndim() as i64;
    if axis < -nd || axis >= nd {
        return Err(Error::value("axis out of range"));
    }
    let ax = (if axis < 0 { axis + nd } else { axis }) as usize;
    let n = a.size(ax);
    if out.as_slice().is_empty() {
        return Ok(());
    }
    let mut vals: Vec<T> = vec![0.0; n];
    let (mut k1, mut k2): (Vec<U>, Vec<U>) = (vec![0; n], vec![0; n]);
    let (mut p1, mut p2): (Vec<P>, Vec<P>) = (vec![0.0; n], vec![0.0; n]);
    let mut res: Vec<R> = vec![0.0; n];
    let lanes: Vec<_> = a.lanes(ax).collect();
    for (lane, mut olane) in lanes.into_iter().zip(out.lanes_mut(ax)) {
        lane.copy_to(&mut vals);
        for (i, &x) in vals.iter().enumerate() {
            k1[i] = key_of(x);
            p1[i] = payload(x, i);
        }
        let in2 = sort_lane(&mut k1, &mut p1, &mut k2, &mut p2);
        let (rk, rp) = if in2 { (&k2, &p2) } else { (&k1, &p1) };
        for ((r, &kk), &pp) in res.iter_mut().zip(rk.iter()).zip(rp.iter()) {
            *r = result(kk, pp);
        }
        olane.copy_from(&res);
    }
    Ok(())
}
