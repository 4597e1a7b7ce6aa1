// torch.nn.functional.avg_pool2d, overload f32: 2-D average pooling over the last two dims,
// zero padding counted in the divisor (count_include_pad), ceil_mode=False.
//
// The shim has checked the arguments (kernel, stride and padding ranges, the padded input at
// least as large as the kernel) and out's shape (*, Ho, Wo). Each plane (one index of the
// leading dims) is copied into a contiguous buffer (any input strides), then every output is
// the sum of the input elements its window covers (padding adds zeros), taken in double,
// divided by kh * kw and rounded once to float32; nan and inf spread as in a sum (inf + -inf
// is nan). Planes are split over scoped threads when the work is large enough.
use opgen::{Result, TensorMut, TensorRef};

const PER_THREAD_MIN: usize = 1 << 15; // input elements per thread below which threads cost more than they save

struct Pool {
    kh: usize,
    kw: usize,
    sh: usize,
    sw: usize,
    ph: usize,
    pw: usize,
}

fn pool_plane(x: TensorRef<f32>, p: &Pool, y: &mut [f32], buf: &mut Vec<f32>) {
    let (h, w) = (x.size(0), x.size(1));
    buf.clear();
    buf.extend(x.iter());
    let oh = (h + 2 * p.ph - p.kh) / p.sh + 1;
    let ow = (w + 2 * p.pw - p.kw) / p.sw + 1;
    let inv = 1.0 / (p.kh * p.kw) as f64;
    for (i, row_out) in (0..oh).zip(y.chunks_exact_mut(ow)) {
        let top = (i * p.sh) as isize - p.ph as isize;
        let r0 = top.max(0) as usize;
        let r1 = ((top + p.kh as isize).max(0) as usize).min(h);
        for (j, o) in row_out.iter_mut().enumerate() {
            let left = (j * p.sw) as isize - p.pw as isize;
            let c0 = left.max(0) as usize;
            let c1 = ((left + p.kw as isize).max(0) as usize).min(w);
            let mut sum = 0.0f64;
            for r in r0..r1 {
                sum += buf[r * w + c0..r * w + c1].iter().map(|&v| v as f64).sum::<f64>();
            }
            *o = (sum * inv) as f32;
        }
    }
}

#[allow(clippy::too_many_arguments)]
pub fn torch_nn_functional_avg_pool2d__f32(
    input: &TensorRef<f32>,
    kernel_h: i64,
    kernel_w: i64,
    stride_h: i64,
    stride_w: i64,
    pad_h: i64,
    pad_w: i64,
    out: &mut TensorMut<f32>,
) -> Result<()> {
    if out.numel() == 0 {
        return Ok(());
    }
    let nd = input.ndim();
    let p = Pool {
        kh: kernel_h as usize,
        kw: kernel_w as usize,
        sh: stride_h as usize,
        sw: stride_w as usize,
        ph: pad_h as usize,
        pw: pad_w as usize,
    };
    let lead = input.shape()[..nd - 2].to_vec();
    let planes: usize = lead.iter().product();
    let mut index = vec![0usize; nd - 2];
    let mut views = Vec::with_capacity(planes);
    for _ in 0..planes {
        views.push(input.sub(&index));
        for d in (0..nd - 2).rev() {
            index[d] += 1;
            if index[d] < lead[d] {
                break;
            }
            index[d] = 0;
        }
    }
    let plane_out = out.size(nd - 2) * out.size(nd - 1);
    let threads = opgen::max_threads().min(input.numel() / PER_THREAD_MIN).max(1);
    let per = planes.div_ceil(threads);
    let p = &p;
    std::thread::scope(|s| {
        let mut parts = views.chunks(per).zip(out.as_mut_slice().chunks_mut(per * plane_out));
        let mine = parts.next();
        let work = move |(group, block): (&[TensorRef<f32>], &mut [f32])| {
            let mut buf = Vec::new();
            for (x, y) in group.iter().zip(block.chunks_exact_mut(plane_out)) {
                pool_plane(*x, p, y, &mut buf);
            }
        };
        for part in parts {
            s.spawn(move || work(part));
        }
        if let Some(part) = mine {
            work(part);
        }
    });
    Ok(())
}
