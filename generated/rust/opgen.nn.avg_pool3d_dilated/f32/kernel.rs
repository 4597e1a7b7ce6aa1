// opgen.nn.avg_pool3d_dilated, overload f32: each dilated window's sum (zero padding) times the
// reciprocal of its divisor, the product over the dims of the taps inside the padded input
// (count_include_pad) or inside the input; 1 / 0 where no tap counts, so such a window gives nan. Separable: along W (rows copied into a zero-padded
// buffer), then H, then D, each over contiguous rows; volumes split over scoped threads.
use opgen::{Result, TensorMut, TensorRef};

const PER_THREAD_MIN: usize = 1 << 15; // input elements per thread below which threads cost more than they save

// One pooled dim: input size, kernel, stride, padding, dilation, output size (the shim's).
#[derive(Clone, Copy)]
struct Axis {
    n: usize,
    k: usize,
    s: usize,
    p: usize,
    d: usize,
    o: usize,
}

impl Axis {
    fn new(n: usize, k: i64, s: i64, p: i64, d: i64, o: usize) -> Axis {
        Axis { n, k: k as usize, s: s as usize, p: p as usize, d: d as usize, o }
    }
    // The padded row a window may touch: the padded input, or further in ceil mode (a last
    // window hanging past the right padding); m: its length over the stride, rounded up.
    fn span(&self) -> usize {
        (self.n + 2 * self.p).max((self.o.max(1) - 1) * self.s + self.d * (self.k - 1) + 1)
    }
    fn m(&self) -> usize {
        self.span().div_ceil(self.s)
    }
    fn buf_len(&self) -> usize {
        self.s * self.m()
    }
}

#[inline(always)]
fn combine<const MAX: bool>(acc: f32, v: f32) -> f32 {
    if MAX {
        if v > acc || v.is_nan() {
            v // a nan sticks: once acc is nan, nothing is greater
        } else {
            acc
        }
    } else {
        acc + v
    }
}

#[inline(always)]
fn identity<const MAX: bool>() -> f32 {
    if MAX {
        f32::NEG_INFINITY
    } else {
        0.0
    }
}

// One contiguous row of a.n inputs pooled along its length into y (a.o outputs). The padded row
// is split by the stride into s phases of m (buf holds s * m floats): phase r holds padded
// positions r, r + s, r + 2s, ..., so window tap j of every output is one contiguous run of a
// phase (padded position o*s + j*d is phase (j*d) % s at o + (j*d) / s) and each tap is a
// unit-stride loop that vectorizes, whatever the stride.
#[inline(always)]
fn pool_row<const MAX: bool>(row: &[f32], a: &Axis, y: &mut [f32], buf: &mut [f32]) {
    let (s, m, n, p) = (a.s, a.m(), a.n, a.p);
    let id = identity::<MAX>();
    for r in 0..s {
        let dst = &mut buf[r * m..(r + 1) * m];
        // the q of this phase inside the input: 0 <= q*s + r - p < n
        let q0 = (if r >= p { 0 } else { (p - r).div_ceil(s) }).min(m);
        let q1 = ((n + p + s - 1 - r) / s).min(m).max(q0);
        dst[..q0].fill(id);
        if q1 > q0 {
            let start = q0 * s + r - p;
            if s == 1 {
                dst[q0..q1].copy_from_slice(&row[start..start + (q1 - q0)]);
            } else if s == 2 {
                // pairs (a constant stride: this loop vectorizes), then a last lone element
                let src = &row[start..];
                let pairs = (src.len() / 2).min(q1 - q0);
                for (d, c) in dst[q0..q0 + pairs].iter_mut().zip(src.chunks_exact(2)) {
                    *d = c[0];
                }
                if pairs < q1 - q0 {
                    dst[q0 + pairs] = src[2 * pairs];
                }
            } else {
                for (d, c) in dst[q0..q1].iter_mut().zip(row[start..].chunks(s)) {
                    *d = c[0];
                }
            }
        }
        dst[q1..].fill(id);
    }
    let o_n = y.len();
    y.copy_from_slice(&buf[..o_n]);
    for j in 1..a.k {
        let t = j * a.d;
        let off = (t % s) * m + t / s;
        for (v, &q) in y.iter_mut().zip(&buf[off..off + o_n]) {
            *v = combine::<MAX>(*v, q);
        }
    }
}

// The divisor along one dim: the taps o*s - p + j*d (j < k) inside the padded input [-p, n + p)
// (count_include_pad; the taps of a ceil-mode window past it never count), or inside [0, n).
fn counts(a: &Axis, include_pad: bool) -> Vec<f32> {
    let (n, p) = (a.n as i64, a.p as i64);
    let (lo, hi) = if include_pad { (-p, n + p) } else { (0, n) };
    (0..a.o)
        .map(|o| {
            let start = (o * a.s) as i64 - p;
            (0..a.k).filter(|&j| (lo..hi).contains(&(start + (j * a.d) as i64))).count() as f32
        })
        .collect()
}

// Every plane (one index of the leading dims, `lead` of them) as a view, in row-major order.
fn planes<'a>(input: &TensorRef<'a, f32>, lead: usize) -> Vec<TensorRef<'a, f32>> {
    let shape = input.shape()[..lead].to_vec();
    let count: usize = shape.iter().product();
    let mut index = vec![0usize; lead];
    let mut views = Vec::with_capacity(count);
    for _ in 0..count {
        views.push(input.sub(&index));
        for d in (0..lead).rev() {
            index[d] += 1;
            if index[d] < shape[d] {
                break;
            }
            index[d] = 0;
        }
    }
    views
}

fn copy_into(x: &TensorRef<f32>, dst: &mut [f32]) {
    match x.as_slice() {
        Some(s) => dst.copy_from_slice(s),
        None => {
            for (d, v) in dst.iter_mut().zip(x.iter()) {
                *d = v;
            }
        }
    }
}

// Runs `work` on groups of planes and their blocks of out (plane_out elements each), on scoped
// threads when the input is large enough.
fn split<F>(views: &[TensorRef<f32>], out: &mut [f32], plane_out: usize, numel: usize, work: F)
where
    F: Fn(&[TensorRef<f32>], &mut [f32]) + Sync,
{
    if views.is_empty() || plane_out == 0 {
        return;
    }
    let threads = opgen::max_threads().min(numel / PER_THREAD_MIN).max(1);
    let per = views.len().div_ceil(threads);
    let work = &work;
    std::thread::scope(|s| {
        let mut parts = views.chunks(per).zip(out.chunks_mut(per * plane_out));
        let mine = parts.next();
        for (group, block) in parts {
            s.spawn(move || work(group, block));
        }
        if let Some((group, block)) = mine {
            work(group, block);
        }
    });
}

// 3-D, separably (a max with nan propagation and a sum are both associative): along W into t1
// (D, H, Wo), along H into t2 (D, Ho, Wo), along D into out (Do, Ho, Wo); inv (avg only) the
// reciprocal divisor of each output of a volume.
fn pool3d<const MAX: bool>(input: &TensorRef<f32>, ad: Axis, ah: Axis, aw: Axis, inv: &[f32], out: &mut TensorMut<f32>) {
    let nd = input.ndim();
    let views = planes(input, nd - 3);
    let (dn, hn, wn) = (ad.n, ah.n, aw.n);
    let (dout, hout, wout) = (ad.o, ah.o, aw.o);
    let slab = hout * wout;
    let numel = input.numel();
    split(&views, out.as_mut_slice(), dout * slab, numel, |group, block| {
        let id = identity::<MAX>();
        let mut x = vec![0.0f32; dn * hn * wn];
        let mut buf = vec![0.0f32; aw.buf_len()];
        let mut t1 = vec![0.0f32; dn * hn * wout];
        let mut t2 = vec![0.0f32; dn * slab];
        for (view, o) in group.iter().zip(block.chunks_exact_mut(dout * slab)) {
            let xs: &[f32] = match view.as_slice() {
                Some(v) => v, // a contiguous volume is read in place
                None => {
                    copy_into(view, &mut x);
                    &x
                }
            };
            for (row, y) in xs.chunks_exact(wn).zip(t1.chunks_exact_mut(wout)) {
                pool_row::<MAX>(row, &aw, y, &mut buf);
            }
            for d in 0..dn {
                for oh in 0..hout {
                    let y = &mut t2[(d * hout + oh) * wout..(d * hout + oh + 1) * wout];
                    y.fill(id);
                    for j in 0..ah.k {
                        let h = (oh * ah.s + j * ah.d) as i64 - ah.p as i64;
                        if h < 0 || h >= hn as i64 {
                            continue;
                        }
                        let r = &t1[(d * hn + h as usize) * wout..(d * hn + h as usize + 1) * wout];
                        for (v, &q) in y.iter_mut().zip(r) {
                            *v = combine::<MAX>(*v, q);
                        }
                    }
                }
            }
            for (od, y) in o.chunks_exact_mut(slab).enumerate() {
                y.fill(id);
                for j in 0..ad.k {
                    let d = (od * ad.s + j * ad.d) as i64 - ad.p as i64;
                    if d < 0 || d >= dn as i64 {
                        continue;
                    }
                    let r = &t2[d as usize * slab..(d as usize + 1) * slab];
                    for (v, &q) in y.iter_mut().zip(r) {
                        *v = combine::<MAX>(*v, q);
                    }
                }
                if !MAX {
                    for (v, &r) in y.iter_mut().zip(&inv[od * slab..(od + 1) * slab]) {
                        *v *= r;
                    }
                }
            }
        }
    });
}

#[allow(clippy::too_many_arguments)]
pub fn opgen_nn_avg_pool3d_dilated__f32(
    input: &TensorRef<f32>,
    kernel_d: i64,
    kernel_h: i64,
    kernel_w: i64,
    stride_d: i64,
    stride_h: i64,
    stride_w: i64,
    pad_d: i64,
    pad_h: i64,
    pad_w: i64,
    dilation_d: i64,
    dilation_h: i64,
    dilation_w: i64,
    _ceil_mode: bool,
    count_include_pad: bool,
    out: &mut TensorMut<f32>,
) -> Result<()> {
    if out.numel() == 0 {
        return Ok(());
    }
    let nd = input.ndim();
    let ad = Axis::new(input.size(nd - 3), kernel_d, stride_d, pad_d, dilation_d, out.size(nd - 3));
    let ah = Axis::new(input.size(nd - 2), kernel_h, stride_h, pad_h, dilation_h, out.size(nd - 2));
    let aw = Axis::new(input.size(nd - 1), kernel_w, stride_w, pad_w, dilation_w, out.size(nd - 1));
    let (cd, ch, cw) = (counts(&ad, count_include_pad), counts(&ah, count_include_pad), counts(&aw, count_include_pad));
    let mut inv = Vec::with_capacity(cd.len() * ch.len() * cw.len());
    for &a in &cd {
        for &b in &ch {
            for &c in &cw {
                inv.push(1.0 / (a * b * c));
            }
        }
    }
    pool3d::<false>(input, ad, ah, aw, &inv, out);
    Ok(())
}
