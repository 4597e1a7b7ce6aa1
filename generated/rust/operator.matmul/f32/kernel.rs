// operator.matmul, overload f32: out[..., i, j] = sum_p a[..., i, p] * b[..., p, j].
//
// The shim has already broadcast the batch dims (stride 0 where broadcast), so a is
// (*batch, m, k), b is (*batch, k, n) and out (*batch, m, n), contiguous. Inputs may have
// any strides (transposed, sliced, negative, 0).
//
// A GotoBLAS/BLIS-style GEMM in safe Rust:
//   - b is packed into NR-wide column panels ([panel][p][NR], zero-padded to whole panels)
//     and a, KC columns at a time, into MR-tall row panels, so the micro-kernel reads both
//     contiguously whatever the input strides;
//   - the MR x NR micro-kernel walks the two packed panels with chunks_exact, so every
//     access is in bounds by construction (no checks in the loop), and keeps the tile in a
//     local array that LLVM holds in vector registers: 12 x 32 floats = 24 AVX-512 registers,
//     one fused multiply-add (mul_add) per broadcast element of a and vector of b;
//   - for a large product, the threads (std::thread::scope, the caller's thread among them)
//     first pack disjoint panels of b, meet at a barrier, then take blocks of rows of the
//     result one at a time from a shared queue (a thread whose core is busy elsewhere takes
//     fewer); many small products are shared out the same way, one whole product at a time.
// Every product a[i,p]*b[p,j] is summed (no skipping of zeros), so nan and inf propagate
// as in the plain triple loop; padding only feeds tile entries that are never stored.
// Accumulation is in float (the spec's tolerance covers any summation order). k == 0
// gives zeros; m, n or a batch dim of 0 gives nothing to write.
use opgen::{Error, Result, TensorMut, TensorRef};
use std::sync::{Barrier, Mutex, OnceLock};

type T = f32;
const MR: usize = 12; // rows of the tile
const NR: usize = 32; // columns of the tile: two 16-lane vectors
const KC: usize = 512; // depth of a packed panel of a: MR x KC floats (24 KiB) stay in L1
const NC: usize = 2048; // columns per sweep: KC x NC floats of packed b (3 MiB) stream from L3
const MIN_FLOPS_PER_THREAD: f64 = 4.0e6; // below this a thread costs more than it saves

/// One 2-d operand: its view (any strides), rows and cols.
#[derive(Clone, Copy)]
struct Mat<'a> {
    v: TensorRef<'a, T>,
    rows: usize,
    cols: usize,
}

impl<'a> Mat<'a> {
    fn new(v: TensorRef<'a, T>) -> Self {
        Mat { v, rows: v.size(0), cols: v.size(1) }
    }
    /// Row i as a slice, if its elements are adjacent.
    fn row(&self, i: usize) -> Option<&'a [T]> {
        self.v.lane(1, &[i]).as_slice()
    }
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

/// Pack the NR-wide panels of b (k x n) into `dst` ([panel][p][NR]), panels `first..`.
fn pack_b(b: Mat, first: usize, dst: &mut [T]) {
    let k = b.rows;
    for (q, panel) in dst.chunks_exact_mut(k * NR).enumerate() {
        let j0 = (first + q) * NR;
        let nr = NR.min(b.cols - j0);
        if b.cols > 0 && b.row(0).is_some() {
            for (p, d) in panel.chunks_exact_mut(NR).enumerate() {
                let row = b.row(p).unwrap_or(&[]);
                d[..nr].copy_from_slice(&row[j0..j0 + nr]);
                d[nr..].fill(0.0);
            }
        } else {
            // Columns of b, each k long: transposed into the panel.
            let cols: Vec<Vec<T>> = (j0..j0 + nr).map(|j| b.v.lane(0, &[j]).to_vec()).collect();
            let cols: Vec<&[T]> = cols.iter().map(|c| c.as_slice()).collect();
            pack_transposed::<NR>(&cols, panel);
        }
    }
}

/// Pack rows i0..i0+mr, columns p0..p0+kc of a into one MR-tall panel ([p][MR], zero rows past mr).
fn pack_a(a: Mat, i0: usize, mr: usize, p0: usize, kc: usize, dst: &mut [T]) {
    let dst = &mut dst[..kc * MR];
    if a.rows > 0 && a.row(i0).is_some() {
        let rows: Vec<&[T]> = (i0..i0 + mr).map(|i| &a.row(i).unwrap_or(&[])[p0..p0 + kc]).collect();
        pack_transposed::<MR>(&rows, dst);
    } else {
        for (p, d) in dst.chunks_exact_mut(MR).enumerate() {
            let lane = a.v.lane(0, &[p0 + p]); // column p0 + p
            match lane.as_slice() {
                Some(col) => {
                    d[..mr].copy_from_slice(&col[i0..i0 + mr]);
                }
                None => {
                    for (r, x) in d[..mr].iter_mut().enumerate() {
                        *x = lane.get(i0 + r);
                    }
                }
            }
            d[mr..].fill(0.0);
        }
    }
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
/// panels of b (`bp[q]`: k x NR).
fn compute_rows(a: Mat, bp: &[&[T]], n: usize, rows: (usize, usize), c: &mut [T]) {
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
}

/// Pack a run of b's panels (starting at panel `first`) and publish it for the other threads.
fn publish<'b>(b: Mat, first: usize, run: &'b mut [T], slot: &OnceLock<&'b [T]>) {
    pack_b(b, first, run);
    let _ = slot.set(run);
}

/// One product c = a @ b (a: m x k, b: k x n, c: m x n contiguous) on up to `threads` threads.
fn gemm(a: Mat, b: Mat, c: &mut [T], threads: usize) {
    let (m, k, n) = (a.rows, a.cols, b.cols);
    if m == 0 || n == 0 {
        return;
    }
    if k == 0 {
        c.fill(0.0);
        return;
    }
    let panels = n.div_ceil(NR);
    let mut bp = vec![0.0 as T; panels * k * NR];
    if threads <= 1 {
        pack_b(b, 0, &mut bp);
        let bp: Vec<&[T]> = bp.chunks_exact(k * NR).collect();
        compute_rows(a, &bp, n, (0, m), c);
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
            compute_rows(a, &bp, n, (i * rows, (i * rows + rows).min(m)), block);
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

pub fn operator_matmul__f32(a: &TensorRef<f32>, b: &TensorRef<f32>, out: &mut TensorMut<f32>) -> Result<()> {
    let nd = out.ndim();
    if nd < 2 || a.ndim() != nd || b.ndim() != nd {
        return Err(Error::value("matmul expects a, b and out of the same rank >= 2"));
    }
    let (m, k, n) = (a.size(nd - 2), a.size(nd - 1), b.size(nd - 1));
    if b.size(nd - 2) != k || out.size(nd - 2) != m || out.size(nd - 1) != n {
        return Err(Error::value("matmul core dims do not match"));
    }
    let batch_shape = out.shape()[..nd - 2].to_vec();
    if a.shape()[..nd - 2] != batch_shape[..] || b.shape()[..nd - 2] != batch_shape[..] {
        return Err(Error::value("matmul batch dims are not aligned"));
    }
    let batch: usize = batch_shape.iter().product();
    if batch == 0 || m == 0 || n == 0 {
        return Ok(());
    }
    // The batch elements in row-major order of the batch dims (the order of out's blocks).
    let mut index = vec![0usize; nd - 2];
    let mut operands = Vec::with_capacity(batch);
    for _ in 0..batch {
        operands.push((Mat::new(a.sub(&index)), Mat::new(b.sub(&index))));
        for d in (0..nd - 2).rev() {
            index[d] += 1;
            if index[d] < batch_shape[d] {
                break;
            }
            index[d] = 0;
        }
    }
    let flops = 2.0 * (m * n) as f64 * k as f64;
    let max_threads = opgen::max_threads();
    let c = out.as_mut_slice();
    if flops >= 2.0 * MIN_FLOPS_PER_THREAD || batch == 1 {
        // Big products (or one product): threads inside each product.
        let threads = max_threads.min((flops / MIN_FLOPS_PER_THREAD) as usize).max(1);
        for ((a2, b2), c2) in operands.iter().zip(c.chunks_exact_mut(m * n)) {
            gemm(*a2, *b2, c2, threads);
        }
        return Ok(());
    }
    // Many small products: whole products per thread.
    let threads = max_threads.min((flops * batch as f64 / MIN_FLOPS_PER_THREAD) as usize).max(1);
    if threads <= 1 {
        for ((a2, b2), c2) in operands.iter().zip(c.chunks_exact_mut(m * n)) {
            gemm(*a2, *b2, c2, 1);
        }
        return Ok(());
    }
    let queue = Mutex::new(operands.iter().zip(c.chunks_exact_mut(m * n)));
    let worker = || loop {
        let next = queue.lock().unwrap_or_else(|e| e.into_inner()).next();
        let Some(((a2, b2), c2)) = next else { break };
        gemm(*a2, *b2, c2, 1);
    };
    std::thread::scope(|s| {
        for _ in 1..threads {
            s.spawn(worker);
        }
        worker();
    });
    Ok(())
}
