// torch.addmm, overload f32: out = beta * input + alpha * (mat1 @ mat2), f32, BLAS rules.
//
// mat1 is (m, k), mat2 (k, n), input and out (m, n), out contiguous; every operand may have
// any strides (mat2 as a transposed view x @ W.T, sliced, reversed, stride 0 for a broadcast
// bias). beta == 0 never reads input (nan/inf there do not propagate); alpha == 0 (or k == 0)
// never reads mat1 or mat2: out = beta * input (zeros when beta is 0 too). alpha and beta are
// rounded to f32 first, as torch passes them to gemm.
//
// The GotoBLAS/BLIS-style GEMM of the shipped Rust linear kernel (mat2 (k, n) is linear's W^T):
//   - mat2 is packed into NR-wide column panels ([panel][p][NR], zero-padded) and the rows of
//     mat1, KC columns at a time, into MR-tall panels, so the micro-kernel reads both
//     contiguously whatever the strides;
//   - the MR x NR micro-kernel walks the packed panels with chunks_exact (in bounds by
//     construction) and keeps the tile in vector registers, one fused multiply-add (mul_add)
//     per broadcast element of mat1 and element of mat2; it is not inlined, so LLVM compiles
//     it the same whatever its caller looks like;
//   - each finished block of rows gets the epilogue alpha * sum + beta * input (input read
//     through its strides: a slice where its rows are contiguous, one value where stride 0);
//   - on several threads (std::thread::scope, the caller's thread among them) each packs a
//     run of mat2's panels, all meet at a barrier, then take blocks of rows from a shared
//     queue one at a time.
// Every product is summed (no skipping of zeros), so nan and inf in mat1 and mat2 propagate as
// in the plain loop when alpha != 0; padding only feeds tile entries that are never stored.
use opgen::{Result, TensorMut, TensorRef};
use std::sync::{Barrier, Mutex, OnceLock};

type T = f32;
const MR: usize = 12; // rows of the tile
const NR: usize = 32; // columns of the tile: two 512-bit vectors
const KC: usize = 512; // depth of a packed panel of mat1: MR x KC elements (24 KiB) stay in L1
const NC: usize = 2048; // columns per sweep
const MIN_FLOPS_PER_THREAD: f64 = 4.0e6; // below this a thread costs more than it saves

/// The rows of mat1 as slices of k elements (a contiguous copy where mat1's rows are strided).
struct Rows<'a> {
    lanes: Vec<&'a [T]>,
    cols: usize,
}

/// What the finished sums become: alpha * sum + beta * input (input not read when beta == 0).
#[derive(Clone, Copy)]
struct Epilogue<'a> {
    input: TensorRef<'a, T>,
    alpha: T,
    beta: T,
}

/// dst[p * W + r] = rows[r][p] for p < dst.len() / W, zeros for r >= rows.len(): the transpose
/// of up to W rows, written in order.
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

/// Pack the NR-wide column panels of mat2 (k x n) into `dst` ([panel][p][NR]), panels `first..`.
fn pack_b(b: TensorRef<T>, first: usize, dst: &mut [T]) {
    let (k, n) = (b.size(0), b.size(1));
    let by_rows = k > 0 && b.lane(1, &[0]).as_slice().is_some(); // mat2's rows contiguous
    for (q, panel) in dst.chunks_exact_mut(k * NR).enumerate() {
        let j0 = (first + q) * NR;
        let nr = NR.min(n - j0);
        if by_rows {
            for (p, d) in panel.chunks_exact_mut(NR).enumerate() {
                let row = b.lane(1, &[p]).as_slice().unwrap_or(&[]);
                d[..nr].copy_from_slice(&row[j0..j0 + nr]);
                d[nr..].fill(0.0);
            }
            continue;
        }
        // Columns j0.. of mat2, transposed into the panel.
        let cols: Vec<Vec<T>> = (j0..j0 + nr).map(|j| b.lane(0, &[j]).to_vec()).collect();
        let cols: Vec<&[T]> = cols.iter().map(|r| r.as_slice()).collect();
        pack_transposed::<NR>(&cols, panel);
    }
}

/// Pack rows i0..i0+mr, columns p0..p0+kc of mat1 into one MR-tall panel ([p][MR], zero rows past mr).
fn pack_a(a: &Rows, i0: usize, mr: usize, p0: usize, kc: usize, dst: &mut [T]) {
    let rows: Vec<&[T]> = a.lanes[i0..i0 + mr].iter().map(|r| &r[p0..p0 + kc]).collect();
    pack_transposed::<MR>(&rows, &mut dst[..kc * MR]);
}

/// tile = A_panel (kc x MR, p-major) * B_panel (kc x NR, p-major).
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

/// out[i, :] = alpha * out[i, :] + beta * input[i, :] for one finished row.
fn finish_row(e: &Epilogue, i: usize, row: &mut [T]) {
    let (alpha, beta) = (e.alpha, e.beta);
    if beta == 0.0 {
        if alpha != 1.0 {
            row.iter_mut().for_each(|o| *o *= alpha);
        }
        return;
    }
    let lane = e.input.lane(1, &[i]);
    if let Some(x) = lane.as_slice() {
        row.iter_mut().zip(x).for_each(|(o, &x)| *o = alpha * *o + beta * x);
    } else if lane.stride() == 0 {
        let x = beta * lane.get(0);
        row.iter_mut().for_each(|o| *o = alpha * *o + x);
    } else {
        row.iter_mut().zip(lane.iter()).for_each(|(o, x)| *o = alpha * *o + beta * x);
    }
}

/// Rows rows.0..rows.1 of c (m x n, contiguous; `c` holds exactly those rows) from the packed
/// panels of mat2 (`bp[q]`: k x NR), then the epilogue on each.
fn compute_rows(a: &Rows, bp: &[&[T]], n: usize, rows: (usize, usize), c: &mut [T], e: &Epilogue) {
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
    for (r, row) in c.chunks_exact_mut(n).enumerate() {
        finish_row(e, rows.0 + r, row);
    }
}

/// Pack a run of mat2's panels (starting at panel `first`) and publish it for the other threads.
fn publish<'b>(b: TensorRef<T>, first: usize, run: &'b mut [T], slot: &OnceLock<&'b [T]>) {
    pack_b(b, first, run);
    let _ = slot.set(run);
}

/// c = epilogue(a @ b) (a: m rows of k >= 1, b: k x n, c: m x n contiguous) on up to `threads` threads.
fn gemm(a: &Rows, b: TensorRef<T>, e: &Epilogue, c: &mut [T], threads: usize) {
    let (m, k, n) = (a.lanes.len(), a.cols, b.size(1));
    let panels = n.div_ceil(NR);
    let mut bp = vec![0.0 as T; panels * k * NR];
    if threads <= 1 {
        pack_b(b, 0, &mut bp);
        let bp: Vec<&[T]> = bp.chunks_exact(k * NR).collect();
        compute_rows(a, &bp, n, (0, m), c, e);
        return;
    }
    let per = panels.div_ceil(threads);
    let runs: Vec<(usize, &mut [T])> = bp.chunks_mut(per * k * NR).enumerate().collect();
    let packed: Vec<OnceLock<&[T]>> = runs.iter().map(|_| OnceLock::new()).collect();
    let barrier = Barrier::new(runs.len());
    let rows = 2 * MR; // small blocks: the threads finish together
    let queue = Mutex::new(c.chunks_mut(rows * n).enumerate());
    let worker = |(t, run): (usize, _)| {
        publish(b, t * per, run, &packed[t]);
        barrier.wait();
        let bp: Vec<&[T]> = packed.iter().flat_map(|p| p.get().map_or(&[][..], |r| *r).chunks_exact(k * NR)).collect();
        loop {
            let next = queue.lock().unwrap_or_else(|e| e.into_inner()).next();
            let Some((i, block)) = next else { break };
            compute_rows(a, &bp, n, (i * rows, (i * rows + rows).min(m)), block, e);
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

pub fn torch_addmm__f32(input: &TensorRef<f32>, mat1: &TensorRef<f32>, mat2: &TensorRef<f32>, beta: f64, alpha: f64, out: &mut TensorMut<f32>) -> Result<()> {
    if out.ndim() != 2 || input.ndim() != 2 || mat1.ndim() != 2 || mat2.ndim() != 2 {
        return Err(opgen::Error::value("addmm expects 2-d input (m, n), mat1 (m, k) and mat2 (k, n)"));
    }
    let (m, n, k) = (out.size(0), out.size(1), mat1.size(1));
    if m == 0 || n == 0 {
        return Ok(());
    }
    let (alpha, beta) = (alpha as T, beta as T);
    let e = Epilogue { input: *input, alpha, beta };
    let c = out.as_mut_slice();
    if alpha == 0.0 || k == 0 {
        // out = beta * input; the product is never read
        for (i, row) in c.chunks_exact_mut(n).enumerate() {
            if beta == 0.0 {
                row.fill(0.0);
            } else {
                row.iter_mut().zip(input.lane(1, &[i]).iter()).for_each(|(o, x)| *o = beta * x);
            }
        }
        return Ok(());
    }
    let lanes: Vec<&[T]> = mat1.lanes(1).map(|l| l.as_slice().unwrap_or(&[])).collect();
    let contiguous = mat1.lanes(1).all(|l| l.as_slice().is_some());
    let copy: Vec<T> = if contiguous { Vec::new() } else { mat1.to_vec() };
    let a = Rows { lanes: if contiguous { lanes } else { copy.chunks_exact(k).collect() }, cols: k };
    let flops = 2.0 * (m * n) as f64 * k as f64;
    let threads = opgen::max_threads().min((flops / MIN_FLOPS_PER_THREAD) as usize).max(1);
    gemm(&a, *mat2, &e, c, threads);
    Ok(())
}
