// opgen.nn.attention, overload f32: general attention (ONNX Attention): an additive float bias,
// causal masking aligned at a given offset (a KV cache), an asymmetric sliding window,
// soft-capping of the scores and grouped-query heads.
//
// Shapes (the shim has aligned the loop dims, stride 0 where broadcast): q (*, Hq, S, D),
// k (*, Hkv, T, D), v (*, Hkv, T, Dv), bias (*, Hq, S, T), out (*, Hq, S, Dv) contiguous.
//
// Blocked, as two small GEMMs around a softmax, on the model of
// opgen.nn.scaled_dot_product_attention's kernel:
//   1. Per key/value head K is packed once transposed into NR-key panels laid out d-major, V
//      into NR-column panels laid out key-major. The query heads of a group share these packs.
//   2. The causal mask and the window allow query i (position p = i + offset) one contiguous
//      range of keys [lo_i, hi_i), both ends nondecreasing in i. Per (loop index, query head,
//      block of BQ queries) the scores are computed only for the key panels the block's rows
//      can reach (under causal masking the panels past its last row are skipped whole), by an
//      MR x NR register-tiled micro-kernel; each row is scaled, soft-capped (tanh in double,
//      branch-free), gets its bias added and goes through max, exp (in double, a polynomial)
//      and sum over its own range, keys with a -inf bias and those outside the range exactly
//      0; then out = P @ V by the same micro-kernel. A query that sees no key gets zeros.
// Scores and the weighted sum accumulate in float32 (the spec's tolerance covers any
// summation order). Both stages run on scoped threads taking work from a shared queue, the
// caller's thread among them.
use opgen::{Error, Result, TensorMut, TensorRef};
use std::sync::{Mutex, OnceLock};

type T = f32;
const MR: usize = 12; // rows of the tile
const NR: usize = 32; // columns of the tile: two 16-lane vectors
const KC: usize = 256; // depth of a packed panel of a
const BQ: usize = 4 * MR; // queries per work item
const SHIFT: f64 = 6755399441055744.0; // 1.5 * 2**52
const LOG2E: f64 = std::f64::consts::LOG2_E;
const LN2_HI: f64 = 0.6931471803691238;
const LN2_LO: f64 = 1.9082149292705877e-10;

/// exp(x) for x <= 0, to about 1e-10 relative (x below -700 gives about 1e-304: 0 once rounded).
#[inline(always)]
fn exp_neg(x: f64) -> f64 {
    let x = if x < -700.0 { -700.0 } else { x };
    let kd = x.mul_add(LOG2E, SHIFT);
    let kbits = kd.to_bits();
    let k = kd - SHIFT;
    let r = (x - k * LN2_HI) - k * LN2_LO;
    let mut p = 1.0 / 40320.0;
    p = p * r + 1.0 / 5040.0;
    p = p * r + 1.0 / 720.0;
    p = p * r + 1.0 / 120.0;
    p = p * r + 1.0 / 24.0;
    p = p * r + 1.0 / 6.0;
    p = p * r + 0.5;
    p = p * r + 1.0;
    p = p * r + 1.0;
    p * f64::from_bits(kbits.wrapping_add(1023) << 52)
}

/// tile = A_panel (kc x MR, p-major) * B_panel (kc x NR, p-major). Not inlined: compiled on its
/// own, LLVM keeps the whole tile in vector registers whatever the caller looks like.
#[inline(never)]
fn micro_kernel(a: &[T], b: &[T], tile: &mut [[T; NR]; MR]) {
    let mut acc = [[0.0 as T; NR]; MR];
    for (ap, bp) in a.chunks_exact(MR).zip(b.chunks_exact(NR)) {
        let ap: &[T; MR] = ap.try_into().unwrap();
        let bp: &[T; NR] = bp.try_into().unwrap();
        for i in 0..MR {
            let ai = ap[i];
            for j in 0..NR {
                acc[i][j] = ai.mul_add(bp[j], acc[i][j]);
            }
        }
    }
    *tile = acc;
}

/// dst[p * W + r] = rows[r][p] for p < dst.len() / W, zeros for r >= rows.len(): the transpose
/// of up to W rows, written in order (a strided write would make LLVM scatter, which is slow).
fn pack_transposed<const W: usize>(rows: &[&[T]], dst: &mut [T]) {
    let k = dst.len() / W;
    let zeros = vec![0.0 as T; if rows.len() < W { k } else { 0 }];
    let mut src: [&[T]; W] = [&zeros[..]; W];
    for (s, r) in src.iter_mut().zip(rows) {
        *s = &r[..k];
    }
    for (p, d) in dst.chunks_exact_mut(W).enumerate() {
        for (x, s) in d.iter_mut().zip(&src) {
            *x = s[p];
        }
    }
}

/// c (m x n, contiguous) = a (m x k, rows `lda` apart) @ B, B given by its NR-column panels
/// (`panel(q)`: k x NR, p-major). k == 0 gives zeros.
fn gemm<'p>(a: &[T], lda: usize, m: usize, k: usize, n: usize, panel: impl Fn(usize) -> &'p [T], c: &mut [T]) {
    if k == 0 {
        c[..m * n].fill(0.0);
        return;
    }
    let mut ap = vec![0.0 as T; MR * KC.min(k)];
    let mut tile = [[0.0 as T; NR]; MR];
    for p0 in (0..k).step_by(KC) {
        let kc = KC.min(k - p0);
        for i0 in (0..m).step_by(MR) {
            let mr = MR.min(m - i0);
            let ap = &mut ap[..kc * MR];
            let rows: Vec<&[T]> = (i0..i0 + mr).map(|i| &a[i * lda + p0..i * lda + p0 + kc]).collect();
            pack_transposed::<MR>(&rows, ap);
            for q in 0..n.div_ceil(NR) {
                micro_kernel(ap, &panel(q)[p0 * NR..(p0 + kc) * NR], &mut tile);
                let j0 = q * NR;
                let nr = NR.min(n - j0);
                for (r, t) in tile.iter().enumerate().take(mr) {
                    let dst = &mut c[(i0 + r) * n + j0..(i0 + r) * n + j0 + nr];
                    if p0 == 0 {
                        dst.copy_from_slice(&t[..nr]);
                    } else {
                        dst.iter_mut().zip(&t[..nr]).for_each(|(d, &s)| *d += s);
                    }
                }
            }
        }
    }
}

/// One key/value head of one loop index, packed for the GEMMs.
struct Packed {
    t: usize,   // keys
    kt: Vec<T>, // K transposed: panels of NR keys, each d x NR
    v: Vec<T>,  // V: panels of NR columns, each t x NR
    d: usize,
}

fn pack(k: TensorRef<T>, v: TensorRef<T>) -> Packed {
    let (t, d, dv) = (k.size(0), k.size(1), v.size(1));
    let mut kt = vec![0.0 as T; t.div_ceil(NR) * d * NR];
    if d > 0 {
        for (q, panel) in kt.chunks_exact_mut(d * NR).enumerate() {
            let rows: Vec<Vec<T>> = (q * NR..t.min(q * NR + NR)).map(|key| k.lane(1, &[key]).to_vec()).collect();
            let rows: Vec<&[T]> = rows.iter().map(|r| r.as_slice()).collect();
            for (p0, block) in (0..d).step_by(KC).zip(panel.chunks_mut(KC * NR)) {
                let part: Vec<&[T]> = rows.iter().map(|r| &r[p0..]).collect();
                pack_transposed::<NR>(&part, block);
            }
        }
    }
    let mut vp = vec![0.0 as T; dv.div_ceil(NR) * t * NR];
    if t > 0 {
        for (q, panel) in vp.chunks_exact_mut(t * NR).enumerate() {
            let (j0, nr) = (q * NR, NR.min(dv - q * NR));
            for (key, dst) in panel.chunks_exact_mut(NR).enumerate() {
                let row = v.lane(1, &[key]);
                match row.as_slice() {
                    Some(r) => dst[..nr].copy_from_slice(&r[j0..j0 + nr]),
                    None => dst[..nr].iter_mut().enumerate().for_each(|(c, x)| *x = row.get(j0 + c)),
                }
            }
        }
    }
    Packed { t, kt, v: vp, d }
}

/// The masks' scalars: which keys each query may see, and how scores are formed.
#[derive(Clone, Copy)]
struct Mask {
    is_causal: bool,
    offset: i64,
    left: i64,
    right: i64,
    softcap: f64, // <= 0: none
    scale: f64,
}

impl Mask {
    /// [lo, hi): the keys query i may see by the causal mask and the window, clamped to [0, t].
    /// (In i128: i + offset - left and the like cannot overflow whatever the scalars are.)
    fn range(&self, i: usize, t: usize) -> (usize, usize) {
        let tt = t as i128;
        let p = i as i128 + self.offset as i128;
        let lo = if self.left < 0 { 0 } else { (p - self.left as i128).clamp(0, tt) };
        let mut hi = tt;
        if self.is_causal {
            hi = hi.min((p + 1).clamp(0, tt));
        }
        if self.right >= 0 {
            hi = hi.min((p + self.right as i128 + 1).clamp(0, tt));
        }
        (lo as usize, hi.max(lo) as usize)
    }
}

/// tanh(x) in double, branch-free: x (1 - x^2/3 + 2x^4/15) below 1e-3 (error < 1e-13 relative),
/// else (1 - e) / (1 + e) with e = exp(-2|x|), the sign put back (about 1e-10 absolute).
#[inline(always)]
fn tanh64(x: f64) -> f64 {
    let ax = x.abs();
    let x2 = x * x;
    let small = x * (1.0 - x2 * (1.0 / 3.0 - x2 * (2.0 / 15.0)));
    let e = exp_neg(-2.0 * ax);
    let big = ((1.0 - e) / (1.0 + e)).copysign(x);
    if ax < 1e-3 { small } else { big }
}

/// Queries i0..i0+rows of one head (its bias rows in `bias`) against its packed key/value head,
/// into `out` (rows x dv).
fn attend(q: TensorRef<T>, bias: TensorRef<T>, i0: usize, kv: &Packed, mask: Mask, dv: usize, out: &mut [T]) {
    let rows = out.len() / dv;
    let t = kv.t;
    // The keys any row of the block can see: from the first row's lo to the last row's hi.
    let (lo, _) = mask.range(i0, t);
    let (_, hi) = mask.range(i0 + rows - 1, t);
    if lo >= hi {
        out.fill(0.0);
        return;
    }
    let (q_lo, q_hi) = (lo / NR, hi.div_ceil(NR));
    let span = (q_hi - q_lo) * NR; // scores for the keys q_lo*NR .. q_hi*NR
    let d = kv.d;
    let mut qbuf = vec![0.0 as T; rows * d];
    for (r, dst) in qbuf.chunks_exact_mut(d.max(1)).take(rows).enumerate() {
        if d > 0 {
            q.lane(1, &[i0 + r]).copy_to(dst);
        }
    }
    let mut scores = vec![0.0 as T; rows * span];
    gemm(&qbuf, d, rows, d, span, |p| &kv.kt[(q_lo + p) * d * NR..(q_lo + p + 1) * d * NR], &mut scores);
    // Per row over its own range: scale, cap, + bias; softmax; everything else exactly 0.
    let mut blind = vec![false; rows];
    let base = q_lo * NR;
    let (scale, cap) = (mask.scale, mask.softcap);
    // A cap below 1e-30 bounds every capped score by itself: 0 to well within the tolerance.
    let flat = cap > 0.0 && cap < 1e-30;
    let inv_cap = if cap > 0.0 && !flat { 1.0 / cap } else { 0.0 };
    let mut brow = vec![0.0 as T; span];
    for (r, row) in scores.chunks_exact_mut(span).enumerate() {
        let (a, b) = mask.range(i0 + r, t);
        let (a, b) = (a.max(base) - base, b.max(base) - base);
        if a >= b {
            blind[r] = true;
            row.fill(0.0);
            continue;
        }
        row[..a].fill(0.0);
        row[b..].fill(0.0);
        let lane = bias.lane(1, &[i0 + r]);
        let bseen = &mut brow[a..b];
        match lane.as_slice() {
            Some(s) => bseen.copy_from_slice(&s[base + a..base + b]),
            None => bseen.iter_mut().enumerate().for_each(|(c, x)| *x = lane.get(base + a + c)),
        }
        let seen = &mut row[a..b];
        if flat {
            seen.iter_mut().zip(bseen.iter()).for_each(|(x, &bv)| *x = bv);
        } else if cap > 0.0 {
            seen.iter_mut().zip(bseen.iter()).for_each(|(x, &bv)| {
                *x = (cap * tanh64(scale * *x as f64 * inv_cap) + bv as f64) as f32
            });
        } else {
            seen.iter_mut().zip(bseen.iter()).for_each(|(x, &bv)| *x = (scale * *x as f64 + bv as f64) as f32);
        }
        let m = max(seen);
        if m == T::NEG_INFINITY {
            // every key in range masked by the bias
            blind[r] = true;
            seen.fill(0.0);
            continue;
        }
        let m = m as f64;
        // exp_neg clamps: a -inf score gives about 1e-304, 0 once rounded to float32.
        seen.iter_mut().for_each(|x| *x = exp_neg(*x as f64 - m) as f32);
        let inv = (1.0 / sum(seen)) as f32;
        seen.iter_mut().for_each(|x| *x *= inv);
    }
    // out = P @ V over the same keys.
    let vt = t * NR; // one V panel
    gemm(&scores, span, rows, span.min(t - q_lo * NR), dv, |p| &kv.v[p * vt + q_lo * NR * NR..p * vt + t * NR], out);
    for (r, row) in out.chunks_exact_mut(dv).enumerate() {
        if blind[r] {
            row.fill(0.0);
        }
    }
}

/// Largest element (with sixteen partial maxima: a float reduction is not vectorised otherwise).
fn max(v: &[T]) -> T {
    let mut acc = [T::NEG_INFINITY; 16];
    let chunks = v.chunks_exact(16);
    let tail = chunks.remainder();
    for c in chunks {
        for j in 0..16 {
            acc[j] = if c[j] > acc[j] { c[j] } else { acc[j] };
        }
    }
    acc.iter().chain(tail).fold(T::NEG_INFINITY, |m, &x| if x > m { x } else { m })
}

/// -(smallest element), for a negative scale.
fn max_neg(v: &[T]) -> T {
    -v.iter().fold(T::INFINITY, |m, &x| if x < m { x } else { m })
}

/// Sum in double with sixteen partial sums.
fn sum(v: &[T]) -> f64 {
    let mut acc = [0.0f64; 16];
    let chunks = v.chunks_exact(16);
    let tail = chunks.remainder();
    for c in chunks {
        for j in 0..16 {
            acc[j] += c[j] as f64;
        }
    }
    acc.iter().sum::<f64>() + tail.iter().map(|&x| x as f64).sum::<f64>()
}

/// Run `work` on every item of `items` on `threads` scoped threads (the caller's among them),
/// each taking the next item when done with the last.
fn share<I: Iterator + Send>(items: I, threads: usize, work: impl Fn(I::Item) + Sync)
where
    I::Item: Send,
{
    let queue = Mutex::new(items);
    let worker = || loop {
        let next = queue.lock().unwrap_or_else(|e| e.into_inner()).next();
        match next {
            Some(item) => work(item),
            None => break,
        }
    };
    std::thread::scope(|s| {
        for _ in 1..threads {
            s.spawn(&worker);
        }
        worker();
    });
}

#[allow(clippy::too_many_arguments)]
pub fn opgen_nn_attention__f32(
    q: &TensorRef<f32>,
    k: &TensorRef<f32>,
    v: &TensorRef<f32>,
    bias: &TensorRef<f32>,
    is_causal: bool,
    offset: i64,
    left_window: i64,
    right_window: i64,
    softcap: f64,
    scale: f64,
    out: &mut TensorMut<f32>,
) -> Result<()> {
    let nd = out.ndim();
    let (hq, s, dv) = (q.size(nd - 3), q.size(nd - 2), v.size(nd - 1));
    let hkv = k.size(nd - 3);
    if hkv == 0 || hq % hkv != 0 {
        return Err(Error::value(format!(
            "the key/value heads ({}) must be a nonzero divisor of the query heads ({})",
            hkv, hq
        )));
    }
    if out.numel() == 0 {
        return Ok(());
    }
    let mask = Mask { is_causal, offset, left: left_window, right: right_window, softcap, scale };
    let group = hq / hkv;
    let loop_shape = out.shape()[..nd - 3].to_vec();
    let batch: usize = loop_shape.iter().product();
    let mut index = vec![0usize; nd - 3];
    let mut loops = Vec::with_capacity(batch);
    for _ in 0..batch {
        loops.push((q.sub(&index), k.sub(&index), v.sub(&index), bias.sub(&index)));
        for d in (0..nd - 3).rev() {
            index[d] += 1;
            if index[d] < loop_shape[d] {
                break;
            }
            index[d] = 0;
        }
    }
    let work = (batch * hq * s) as f64 * (k.size(nd - 2) * (q.size(nd - 1) + dv)) as f64;
    let threads = opgen::max_threads().min((work / 2.0e6) as usize).max(1);
    // 1. Pack every (loop index, key/value head).
    let packed: Vec<OnceLock<Packed>> = (0..batch * hkv).map(|_| OnceLock::new()).collect();
    share(0..batch * hkv, threads, |item| {
        let (_, k3, v3, _) = loops[item / hkv];
        let g = item % hkv;
        let _ = packed[item].set(pack(k3.sub(&[g]), v3.sub(&[g])));
    });
    // 2. Every (loop index, query head, block of queries): a contiguous block of out; the last
    // blocks of a head first (under causal masking they see the most keys).
    let mut items: Vec<(usize, usize, &mut [T])> = out
        .as_mut_slice()
        .chunks_mut(s * dv)
        .enumerate()
        .flat_map(|(bh, head)| head.chunks_mut(BQ * dv).enumerate().map(move |(blk, o)| (bh, blk, o)))
        .collect();
    if is_causal {
        items.sort_by_key(|&(bh, blk, _)| (std::cmp::Reverse(blk), bh));
    }
    share(items.into_iter(), threads, |(bh, blk, o)| {
        let (b, h) = (bh / hq, bh % hq);
        let kv = packed[b * hkv + h / group].get().expect("packed in stage 1");
        attend(loops[b].0.sub(&[h]), loops[b].3.sub(&[h]), blk * BQ, kv, mask, dv, o);
    });
    Ok(())
}
