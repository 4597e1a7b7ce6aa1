// torch.nn.functional.linear, overload f32: out[..., j] = sum_p input[..., p] * weight[j, p].
//
// The rows of input (its last dim, every other dim a loop dim, any strides) times the
// transpose of weight (out_features x in_features, PyTorch's layout; the shim presents it
// with input's loop dims in front at stride 0, so `sub` with zeros gives the matrix), into
// out (rows x out_features, contiguous). (The f32_bias overload is the same GEMM with the
// bias added after the sum.)
//
// A GotoBLAS/BLIS-style GEMM in safe Rust (the one of the Rust operator.matmul answer):
//   - weight is packed into NR-wide panels of its transpose ([panel][p][NR], zero-padded)
//     and the rows of input, KC columns at a time, into MR-tall panels, so the micro-kernel
//     reads both contiguously whatever the strides;
//   - the MR x NR micro-kernel walks the packed panels with chunks_exact (in bounds by
//     construction) and keeps the 12 x 32 tile in 24 AVX-512 registers, one fused multiply-add
//     (mul_add) per broadcast element of input and vector of weight; it is not inlined, so
//     LLVM compiles it the same whatever its caller looks like;
//   - on several threads (std::thread::scope, the caller's thread among them) each packs a
//     run of weight's panels, all meet at a barrier, then take blocks of rows from a shared
//     queue one at a time (a thread whose core is busy elsewhere takes fewer).
// Every product is summed (no skipping of zeros), so nan and inf propagate as in the plain
// loop; padding only feeds tile entries that are never stored. in_features == 0 gives
// zeros; no rows or out_features == 0 give nothing to write.
use opgen::{Lane, Result, TensorMut, TensorRef};
use std::sync::{Barrier, Mutex, OnceLock};

type T = f32;
const MR: usize = 12; // rows of the tile
const NR: usize = 32; // columns of the tile: two 16-lane vectors
const KC: usize = 512; // depth of a packed panel of input: MR x KC floats (24 KiB) stay in L1
const NC: usize = 2048; // columns per sweep: KC x NC floats of packed weight (4 MiB) from L3
const MIN_FLOPS_PER_THREAD: f64 = 4.0e6; // below this a thread costs more than it saves

/// The rows of input as slices of k elements (a contiguous copy where input's rows are strided).
struct Rows<'a> {
    lanes: Vec<&'a [T]>,
    cols: usize,
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

/// Pack the NR-wide panels of weight's transpose (k x n) into `dst` ([panel][p][NR]), panels `first..`.
fn pack_b(w: TensorRef<T>, first: usize, dst: &mut [T]) {
    let (n, k) = (w.size(0), w.size(1));
    let by_rows = k > 0 && w.lane(0, &[0]).as_slice().is_some(); // weight.T's rows contiguous
    for (q, panel) in dst.chunks_exact_mut(k * NR).enumerate() {
        let j0 = (first + q) * NR;
        let nr = NR.min(n - j0);
        if by_rows {
            for (p, d) in panel.chunks_exact_mut(NR).enumerate() {
                let col = w.lane(0, &[p]).as_slice().unwrap_or(&[]);
                d[..nr].copy_from_slice(&col[j0..j0 + nr]);
                d[nr..].fill(0.0);
            }
            continue;
        }
        // Rows j0.. of weight (columns of its transpose), transposed into the panel.
        let rows: Vec<Vec<T>> = (j0..j0 + nr).map(|j| w.lane(1, &[j]).to_vec()).collect();
        let rows: Vec<&[T]> = rows.iter().map(|r| r.as_slice()).collect();
        pack_transposed::<NR>(&rows, panel);
    }
}

/// Pack rows i0..i0+mr, columns p0..p0+kc of input into one MR-tall panel ([p][MR], zero rows past mr).
fn pack_a(a: &Rows, i0: usize, mr: usize, p0: usize, kc: usize, dst: &mut [T]) {
    let rows: Vec<&[T]> = a.lanes[i0..i0 + mr].iter().map(|r| &r[p0..p0 + kc]).collect();
    pack_transposed::<MR>(&rows, &mut dst[..kc * MR]);
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

/// Rows rows.0..rows.1 of c (m x n, contiguous; `c` holds exactly those rows) from the packed
/// panels of b (`bp[q]`: k x NR), then the bias added to each (after the whole sum, as PyTorch).
fn compute_rows(a: &Rows, bp: &[&[T]], n: usize, rows: (usize, usize), c: &mut [T], bias: Option<&[T]>) {
    let k = a.cols;
    let mut ap = vec![0.0 as T; MR * KC];
    let mut tile = [[0.0 as T; NR]; MR];
    for j0 in (0..n).step_by(NC) {
        let q_end = (j0 + NC).min(n).div_ceil(NR);
        for p0 in (0..k).step_by(KC) {
            let kc = KC.min(k - p0);
            let mut i = rows.0;
            while i < rows.1 {
                let mr = MR.min(rows.1 - i);
                pack_a(a, i, mr, p0, kc, &mut ap);
                for q in j0 / NR..q_end {
                    let panel = bp[q];
                    micro_kernel(&ap[..kc * MR], &panel[p0 * NR..(p0 + kc) * NR], &mut tile);
                    let jj = q * NR;
                    let nr = NR.min(n - jj);
                    for (r, t) in tile.iter().enumerate().take(mr) {
                        let start = (i - rows.0 + r) * n + jj;
                        let dst = &mut c[start..start + nr];
                        if p0 == 0 {
                            dst.copy_from_slice(&t[..nr]);
                        } else {
                            dst.iter_mut().zip(&t[..nr]).for_each(|(d, &s)| *d += s);
                        }
                    }
                }
                i += mr;
            }
        }
    }
    if let Some(bias) = bias {
        for row in c.chunks_exact_mut(n) {
            row.iter_mut().zip(bias).for_each(|(o, &b)| *o += b);
        }
    }
}

/// Pack a run of b's panels (starting at panel `first`) and publish it for the other threads.
fn publish<'b>(b: TensorRef<T>, first: usize, run: &'b mut [T], slot: &OnceLock<&'b [T]>) {
    pack_b(b, first, run);
    let _ = slot.set(run);
}

/// c = a @ w.T (+ bias) (a: m rows of k, w: n x k, c: m x n contiguous) on up to `threads` threads.
fn gemm(a: &Rows, w: TensorRef<T>, bias: Option<&[T]>, c: &mut [T], threads: usize) {
    let (m, k, n) = (a.lanes.len(), a.cols, w.size(0));
    let b = w;
    if m == 0 || n == 0 {
        return;
    }
    if k == 0 {
        for row in c.chunks_exact_mut(n) {
            match bias {
                Some(bias) => row.copy_from_slice(bias),
                None => row.fill(0.0),
            }
        }
        return;
    }
    let panels = n.div_ceil(NR);
    let mut bp = vec![0.0 as T; panels * k * NR];
    if threads <= 1 {
        pack_b(b, 0, &mut bp);
        let bp: Vec<&[T]> = bp.chunks_exact(k * NR).collect();
        compute_rows(a, &bp, n, (0, m), c, bias);
        return;
    }
    // One scope: each thread packs its own run of b's panels and publishes it, all wait for
    // the others, then take blocks of rows (a multiple of MR, a contiguous block of c each)
    // from a shared queue one at a time, so a thread whose core is busy with something else
    // takes fewer. The calling thread is one of the workers.
    let per = panels.div_ceil(threads);
    let runs: Vec<(usize, &mut [T])> = bp.chunks_mut(per * k * NR).enumerate().collect();
    let packed: Vec<OnceLock<&[T]>> = runs.iter().map(|_| OnceLock::new()).collect();
    let barrier = Barrier::new(runs.len());
    let rows = 2 * MR; // small blocks: the threads finish together (B is swept per MR rows anyway)
    let queue = Mutex::new(c.chunks_mut(rows * n).enumerate());
    let worker = |(t, run): (usize, _)| {
        publish(b, t * per, run, &packed[t]);
        barrier.wait();
        let bp: Vec<&[T]> = packed.iter().flat_map(|p| p.get().map_or(&[][..], |r| *r).chunks_exact(k * NR)).collect();
        loop {
            let next = queue.lock().unwrap_or_else(|e| e.into_inner()).next();
            let Some((i, block)) = next else { break };
            compute_rows(a, &bp, n, (i * rows, (i * rows + rows).min(m)), block, bias);
        }
    };
    let worker = &worker;
    std::thread::scope(|s| {
        let mut runs = runs.into_iter();
        let mine = runs.next();
        for run in runs {
            s.spawn(move || worker(run));
        }
        if let Some(run) = mine {
            worker(run);
        }
    });
}

pub fn torch_nn_functional_linear__f32(input: &TensorRef<f32>, weight: &TensorRef<f32>, out: &mut TensorMut<f32>) -> Result<()> {
    if out.numel() == 0 {
        return Ok(());
    }
    let rows = out.numel() / out.size(out.ndim() - 1);
    let w = weight.sub(&vec![0; weight.ndim() - 2]);
    linear(input, input.ndim() - 1, rows, w, None, out.as_mut_slice());
    Ok(())
}

fn linear(input: &TensorRef<f32>, last: usize, rows: usize, w: TensorRef<f32>, bias: Option<&[f32]>, c: &mut [f32]) {
    let k = input.size(last);
    let lanes: Vec<Lane<f32>> = input.lanes(last).collect(); // (of length 0 when k == 0)
    let copy: Vec<f32> = if lanes.iter().all(|l| l.as_slice().is_some()) { Vec::new() } else { input.to_vec() };
    let a = Rows {
        lanes: if copy.is_empty() {
            lanes.iter().map(|l| l.as_slice().unwrap_or(&[])).collect()
        } else {
            copy.chunks_exact(k).collect()
        },
        cols: k,
    };
    let flops = 2.0 * (rows * w.size(0)) as f64 * k as f64;
    let threads = opgen::max_threads().min((flops / MIN_FLOPS_PER_THREAD) as usize).max(1);
    gemm(&a, w, bias, c, threads);
}
