// numpy.broadcast_to, overload f32: out = array broadcast to `shape`, as a contiguous copy. The
// shim has checked `shape` (NumPy's ValueErrors), allocated out with that shape, and hands the
// kernel `array` as a view of out's shape with stride 0 along every broadcast dim; so out is that
// view's copy in row-major order: one copy when the view is contiguous (nothing was broadcast),
// else lane by lane along the last dim (a copy of a contiguous lane, a fill for a lane of stride
// 0, a strided read otherwise), the lanes split over threads for large results. Bit for bit.
use opgen::{Lane, Result, TensorMut, TensorRef};

type T = f32;

const PER_THREAD: usize = 1 << 16; // elements: below this a second thread costs more than it saves

fn write_rows(lanes: &[Lane<T>], rows: &mut [T], n: usize) {
    for (lane, row) in lanes.iter().zip(rows.chunks_exact_mut(n)) {
        if lane.stride() == 0 {
            row.fill(lane.get(0));
        } else {
            lane.copy_to(row);
        }
    }
}

pub fn numpy_broadcast_to__f32(array: &TensorRef<T>, shape: &[i64], out: &mut TensorMut<T>) -> Result<()> {
    let _ = shape; // out's shape, checked by the shim, which has broadcast array's view to it
    let dst = out.as_mut_slice();
    if dst.is_empty() {
        return Ok(());
    }
    if let Some(src) = array.as_slice() {
        dst.copy_from_slice(src);
        return Ok(());
    }
    let last = array.ndim() - 1; // a 0-d view is contiguous
    let n = array.size(last);
    let lanes: Vec<Lane<T>> = array.lanes(last).collect();
    let threads = opgen::max_threads().max(1).min((dst.len() / PER_THREAD).max(1));
    if threads == 1 {
        write_rows(&lanes, dst, n);
        return Ok(());
    }
    let per = (lanes.len() + threads - 1) / threads;
    std::thread::scope(|sc| {
        for (group, rows) in lanes.chunks(per).zip(dst.chunks_mut(per * n)) {
            sc.spawn(move || write_rows(group, rows, n));
        }
    });
    Ok(())
}
