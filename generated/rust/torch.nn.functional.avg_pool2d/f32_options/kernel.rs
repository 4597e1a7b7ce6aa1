// torch.nn.functional.avg_pool2d, overload f32_options: each window's sum (zero padding) times the
// reciprocal of torch's divisor, the product over the two dims of the window clipped to the
// padded input (count_include_pad) or to the input. Separable: along W (rows copied into a
// zero-padded buffer split by the stride into phases), then along H, each over contiguous rows;
// planes split over scoped threads.
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

// torch's avg divisor along one dim: the window clipped to the padded input [-p, n + p)
// (count_include_pad; the ceil overhang past it never counts), or to the input [0, n).
#[allow(dead_code)]
fn counts(a: &Axis, include_pad: bool) -> Vec<f32> {
    (0..a.o)
        .map(|o| {
            let (n, p) = (a.n as i64, a.p as i64);
            let mut start = (o * a.s) as i64 - p;
            let mut end = (start + a.k as i64).min(n + p);
            if !include_pad {
                start = start.max(0);
                end = end.min(n);
            }
            (end - start) as f32
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

// 2-D, separably (a max with nan propagation and a sum are both associative): along W into t1
// (H, Wo), then along H into out (Ho, Wo), each tap one contiguous row; inv (avg only) the
// reciprocal divisor of each output of a plane.
fn pool2d<const MAX: bool>(input: &TensorRef<f32>, ah: Axis, aw: Axis, inv: &[f32], out: &mut TensorMut<f32>) {
    let nd = input.ndim();
    let views = planes(input, nd - 2);
    let (hn, wn) = (ah.n, aw.n);
    let (hout, wout) = (ah.o, aw.o);
    let plane_out = hout * wout;
    let numel = input.numel();
    split(&views, out.as_mut_slice(), plane_out, numel, |group, block| {
        let id = identity::<MAX>();
        let mut x = vec![0.0f32; hn * wn];
        let mut buf = vec![0.0f32; aw.buf_len()];
        let mut t1 = vec![0.0f32; hn * wout];
        for (view, o) in group.iter().zip(block.chunks_exact_mut(plane_out)) {
            let xs: &[f32] = match view.as_slice() {
                Some(v) => v, // a contiguous plane is read in place
                None => {
                    copy_into(view, &mut x);
                    &x
                }
            };
            for (row, y) in xs.chunks_exact(wn).zip(t1.chunks_exact_mut(wout)) {
                pool_row::<MAX>(row, &aw, y, &mut buf);
            }
            for (oh, y) in o.chunks_exact_mut(wout).enumerate() {
                // the taps inside the input: 0 <= oh*s - p + j*d < H
                let h0 = (oh * ah.s) as i64 - ah.p as i64;
                let inside = |j: usize| {
                    let h = h0 + (j * ah.d) as i64;
                    h >= 0 && h < hn as i64
                };
                let mut first = true;
                for j in (0..ah.k).filter(|&j| inside(j)) {
                    let h = (h0 + (j * ah.d) as i64) as usize;
                    let r = &t1[h * wout..(h + 1) * wout];
                    if first {
                        y.copy_from_slice(r);
                        first = false;
                    } else {
                        for (v, &q) in y.iter_mut().zip(r) {
                            *v = combine::<MAX>(*v, q);
                        }
                    }
                }
                if first {
                    y.fill(id); // a window wholly in the padding
                }
                if !MAX {
                    for (v, &r) in y.iter_mut().zip(&inv[oh * wout..(oh + 1) * wout]) {
                        *v *= r;
                    }
                }
            }
        }
    });
}

#[allow(clippy::too_many_arguments)]
pub fn torch_nn_functional_avg_pool2d__f32_options(
    input: &TensorRef<f32>,
    kernel_h: i64,
    kernel_w: i64,
    stride_h: i64,
    stride_w: i64,
    pad_h: i64,
    pad_w: i64,
    _ceil_mode: bool,
    count_include_pad: bool,
    out: &mut TensorMut<f32>,
) -> Result<()> {
    if out.numel() == 0 {
        return Ok(());
    }
    let nd = input.ndim();
    let ah = Axis::new(input.size(nd - 2), kernel_h, stride_h, pad_h, 1, out.size(nd - 2));
    let aw = Axis::new(input.size(nd - 1), kernel_w, stride_w, pad_w, 1, out.size(nd - 1));
    let (ch, cw) = (counts(&ah, count_include_pad), counts(&aw, count_include_pad));
    let mut inv = Vec::with_capacity(ch.len() * cw.len());
    for &b in &ch {
        for &c in &cw {
            inv.push(1.0 / (b * c));
        }
    }
    pool2d::<false>(input, ah, aw, &inv, out);
    Ok(())
}
