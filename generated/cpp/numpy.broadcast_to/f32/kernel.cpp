// numpy.broadcast_to, overload f32: out = array broadcast to `shape`, as a contiguous copy. The
// shim has checked `shape` (NumPy's ValueErrors), allocated out with that shape, and hands the
// kernel `array` as a view of out's shape with stride 0 along every broadcast dim; so out is that
// view's contiguous copy. Dims are merged where the view allows (stride-0 dims with their
// neighbours), then rows are copied (memcpy), filled (a dim of 1 broadcast along the last axis)
// or read strided, or a blocked transpose is used where the source is contiguous along another
// dim; large results are split over OpenMP threads. Values are copied bit for bit.
#include "opgen_kernel.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>
#ifdef _OPENMP
#include <omp.h>
#endif

namespace opgen::kernels {

namespace {

using T = float;

constexpr int64_t kPerThreadBytes = int64_t(1) << 18;  // below this a second thread costs more than it saves
constexpr int64_t kTile = 32;                          // the 2-D tile of a blocked transpose (32 x 32 elements)

// A strided view (shape, strides in elements) of the source in out's order: out is its
// contiguous copy. Size-1 dims are dropped and neighbours merged wherever the source allows,
// so a contiguous source is one run (a memcpy) and a permuted one keeps only the dims it must.
struct View {
  int nd = 0;
  int64_t shape[OPGEN_MAX_DIMS];
  int64_t stride[OPGEN_MAX_DIMS];
};

View collapse(int nd0, const int64_t* shape, const int64_t* stride) {
  View v;
  for (int d = 0; d < nd0; ++d) {
    if (shape[d] == 1) continue;
    if (v.nd > 0 && v.stride[v.nd - 1] == stride[d] * shape[d]) {
      v.shape[v.nd - 1] *= shape[d];
      v.stride[v.nd - 1] = stride[d];
    } else {
      v.shape[v.nd] = shape[d];
      v.stride[v.nd] = stride[d];
      ++v.nd;
    }
  }
  return v;
}

int team_for(int64_t bytes) {
  int threads = 1;
#ifdef _OPENMP
  threads = omp_get_max_threads();
#endif
  const int64_t by_size = bytes / kPerThreadBytes;
  return static_cast<int>(by_size < threads ? (by_size < 1 ? 1 : by_size) : threads);
}

// The source offset of the outer item `item` (an index over the dims in `outer`, row-major),
// and its offset in out (whose strides are contiguous in v's shape).
inline void unravel(const View& v, const int* outer, int n_outer, const int64_t* out_stride, int64_t item,
                    int64_t& src_off, int64_t& dst_off) {
  src_off = 0;
  dst_off = 0;
  for (int k = n_outer - 1; k >= 0; --k) {
    const int d = outer[k];
    const int64_t i = item % v.shape[d];
    item /= v.shape[d];
    src_off += i * v.stride[d];
    dst_off += i * out_stride[d];
  }
}

template <class T>
void copy_view(const T* src, int nd0, const int64_t* shape0, const int64_t* stride0, T* dst) {
  int64_t total = 1;
  for (int d = 0; d < nd0; ++d) total *= shape0[d];
  if (total == 0) return;
  const View v = collapse(nd0, shape0, stride0);
  if (v.nd == 0) {
    dst[0] = src[0];
    return;
  }
  const int threads = team_for(total * int64_t(sizeof(T)));
  if (v.nd == 1 && v.stride[0] == 1) {  // contiguous: a (parallel) memcpy
#pragma omp parallel num_threads(threads) if (threads > 1)
    {
      int t = 0, team = 1;
#ifdef _OPENMP
      t = omp_get_thread_num();
      team = omp_get_num_threads();
#endif
      const int64_t lo = (total * t / team) & ~int64_t(15), hi = t + 1 == team ? total : (total * (t + 1) / team) & ~int64_t(15);
      if (lo < hi) std::memcpy(dst + lo, src + lo, size_t(hi - lo) * sizeof(T));
    }
    return;
  }
  int64_t out_stride[OPGEN_MAX_DIMS];
  out_stride[v.nd - 1] = 1;
  for (int d = v.nd - 2; d >= 0; --d) out_stride[d] = out_stride[d + 1] * v.shape[d + 1];
  const int inner = v.nd - 1;
  const int64_t n = v.shape[inner], s = v.stride[inner];
  // A dim other than the inner one that is contiguous in the source (|stride| 1): a blocked
  // transpose of it against the inner dim reads and writes whole cache lines.
  int k = -1;
  if (s != 1 && s != -1 && s != 0)
    for (int d = v.nd - 2; d >= 0; --d)
      if (v.stride[d] == 1) {
        k = d;
        break;
      }
  int outer[OPGEN_MAX_DIMS];
  int n_outer = 0;
  for (int d = 0; d < inner; ++d)
    if (d != k) outer[n_outer++] = d;
  int64_t items = 1;
  for (int j = 0; j < n_outer; ++j) items *= v.shape[outer[j]];
  if (k < 0) {  // rows: the inner dim, strided or not
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1)
    for (int64_t item = 0; item < items; ++item) {
      int64_t so, dof;
      unravel(v, outer, n_outer, out_stride, item, so, dof);
      const T* x = src + so;
      T* y = dst + dof;
      if (s == 1) {
        std::memcpy(y, x, size_t(n) * sizeof(T));
      } else if (s == 0) {  // broadcast along the inner dim: one element repeated
        std::fill(y, y + n, x[0]);
      } else {
        for (int64_t j = 0; j < n; ++j) y[j] = x[j * s];
      }
    }
    return;
  }
  const int64_t m = v.shape[k], ok = out_stride[k];
  const int64_t tiles_m = (m + kTile - 1) / kTile, tiles_n = (n + kTile - 1) / kTile;
  const int64_t work = items * tiles_m * tiles_n;
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1)
  for (int64_t w = 0; w < work; ++w) {
    const int64_t item = w / (tiles_m * tiles_n), tile = w % (tiles_m * tiles_n);
    const int64_t i0 = (tile / tiles_n) * kTile, j0 = (tile % tiles_n) * kTile;
    const int64_t i1 = i0 + kTile < m ? i0 + kTile : m, j1 = j0 + kTile < n ? j0 + kTile : n;
    int64_t so, dof;
    unravel(v, outer, n_outer, out_stride, item, so, dof);
    const T* x = src + so;
    T* y = dst + dof;
    for (int64_t i = i0; i < i1; ++i) {
      const T* xr = x + i;  // source stride 1 along k
      T* yr = y + i * ok;
      for (int64_t j = j0; j < j1; ++j) yr[j] = xr[j * s];
    }
  }
}

}  // namespace

void numpy_broadcast_to__f32(const opgen::Tensor& array, const std::vector<int64_t>& shape, opgen::Tensor& out) {
  (void)shape;  // out's shape, checked by the shim, which has broadcast array's view to it
  copy_view(array.data<T>(), array.ndim(), array.sizes(), array.strides(), out.data<T>());
}

}  // namespace opgen::kernels
