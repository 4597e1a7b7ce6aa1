// numpy.transpose, overload i64: out = a with its axes permuted by `axes`, as a contiguous copy.
//
// out[i_0, ..., i_{n-1}] = a[j] with j[axes[k]] = i_k: out is the contiguous copy of the view of a
// whose dim k is a's dim axes[k] (a negative entry counts from the end). The shim has already
// checked axes (a permutation of range(ndim)), so the kernel only builds that view and copies it.
// Values are copied bit for bit (nan payloads, -0.0). Speed: size-1 dims are dropped and
// neighbours merged (an identity permutation of a contiguous tensor is one memcpy); an inner dim
// that is contiguous in a is copied in rows (memcpy, e.g. the attention head split
// (B, S, H, D) -> (B, H, S, D) copies rows of D); otherwise a dim that is contiguous in a is
// transposed against out's inner dim in 32 x 32 tiles, so reads and writes both use whole cache
// lines. Large copies are split across the OpenMP threads.
#include "opgen_kernel.hpp"

#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>
#ifdef _OPENMP
#include <omp.h>
#endif

namespace opgen::kernels {

namespace {

using T = int64_t;

// The vector types below never cross a library boundary; silence GCC's note that their
// calling convention depends on -m flags.
#pragma GCC diagnostic ignored "-Wpsabi"

// A copy is bound by memory bandwidth: a second thread only pays for itself on large tensors
// (and on a loaded machine a thread team costs more than it saves on small ones).
constexpr int64_t kPerThreadBytes = int64_t(1) << 22;
constexpr int64_t kTile = 32;  // the 2-D tile of a blocked transpose (32 x 32 elements)

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

// An odometer over the outer dims (shape, source strides) of a view: the source offset of the
// current item, advanced one item at a time (no divisions after the start).
struct Odometer {
  int n = 0;
  int64_t shape[OPGEN_MAX_DIMS], stride[OPGEN_MAX_DIMS], idx[OPGEN_MAX_DIMS];
  int64_t off = 0;
  void start(int64_t item) {
    off = 0;
    for (int k = n - 1; k >= 0; --k) {
      idx[k] = item % shape[k];
      item /= shape[k];
      off += idx[k] * stride[k];
    }
  }
  void next() {
    for (int k = n - 1; k >= 0; --k) {
      if (++idx[k] < shape[k]) {
        off += stride[k];
        return;
      }
      off -= stride[k] * (shape[k] - 1);
      idx[k] = 0;
    }
  }
};

// Elements of 4 or 8 bytes as unsigned integers (bits copied, never values converted).
template <size_t N> struct Bits;
template <> struct Bits<4> { typedef uint32_t type; };
template <> struct Bits<8> { typedef uint64_t type; };

// y[i * ldy + j] = x[j * ldx + i] for an 8 x 8 block: 8 vector loads (x contiguous along i),
// a 3-stage shuffle network, 8 vector stores (y contiguous along j).
template <class U>
inline void transpose8(const U* x, int64_t ldx, U* y, int64_t ldy) {
  typedef U v8 __attribute__((vector_size(8 * sizeof(U))));
  typedef typename std::conditional<sizeof(U) == 4, int32_t, int64_t>::type I;
  typedef I m8 __attribute__((vector_size(8 * sizeof(U))));
  v8 r[8], t[8];
  for (int j = 0; j < 8; ++j) std::memcpy(&r[j], x + j * ldx, sizeof(v8));
  const m8 s1lo = {0, 8, 2, 10, 4, 12, 6, 14}, s1hi = {1, 9, 3, 11, 5, 13, 7, 15};
  const m8 s2lo = {0, 1, 8, 9, 4, 5, 12, 13}, s2hi = {2, 3, 10, 11, 6, 7, 14, 15};
  const m8 s3lo = {0, 1, 2, 3, 8, 9, 10, 11}, s3hi = {4, 5, 6, 7, 12, 13, 14, 15};
  for (int p = 0; p < 8; p += 2) {
    t[p] = __builtin_shuffle(r[p], r[p + 1], s1lo);
    t[p + 1] = __builtin_shuffle(r[p], r[p + 1], s1hi);
  }
  for (int p : {0, 1, 4, 5}) {
    r[p] = __builtin_shuffle(t[p], t[p + 2], s2lo);
    r[p + 2] = __builtin_shuffle(t[p], t[p + 2], s2hi);
  }
  for (int p = 0; p < 4; ++p) {
    t[p] = __builtin_shuffle(r[p], r[p + 4], s3lo);
    t[p + 4] = __builtin_shuffle(r[p], r[p + 4], s3hi);
  }
  for (int i = 0; i < 8; ++i) std::memcpy(y + i * ldy, &t[i], sizeof(v8));
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
    if (threads == 1) {
      std::memcpy(dst, src, size_t(total) * sizeof(T));
      return;
    }
#pragma omp parallel num_threads(threads)
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
  const int inner = v.nd - 1;
  const int64_t n = v.shape[inner], s = v.stride[inner];
  // out is (outer..., [m,] n). Where the source is contiguous along out's second-to-last dim
  // (stride 1) and not along its inner one, that pair is transposed in tiles.
  const bool tiled = v.nd >= 2 && s != 1 && v.stride[inner - 1] == 1;
  const int64_t m = tiled ? v.shape[inner - 1] : 1;
  Odometer od0;
  od0.n = tiled ? inner - 1 : inner;
  for (int k = 0; k < od0.n; ++k) {
    od0.shape[k] = v.shape[k];
    od0.stride[k] = v.stride[k];
  }
  int64_t items = 1;
  for (int k = 0; k < od0.n; ++k) items *= od0.shape[k];
  if (!tiled) {  // rows along the inner dim, strided or not
#pragma omp parallel num_threads(threads) if (threads > 1)
    {
      int t = 0, team = 1;
#ifdef _OPENMP
      t = omp_get_thread_num();
      team = omp_get_num_threads();
#endif
      const int64_t lo = items * t / team, hi = items * (t + 1) / team;
      Odometer od = od0;
      od.start(lo);
      for (int64_t item = lo; item < hi; ++item, od.next()) {
        const T* x = src + od.off;
        T* y = dst + item * n;
        if (s == 1) {
          for (int64_t j = 0; j < n; ++j) y[j] = x[j];
        } else {
          for (int64_t j = 0; j < n; ++j) y[j] = x[j * s];
        }
      }
    }
    return;
  }
  typedef typename Bits<sizeof(T)>::type U;
  const U* usrc = reinterpret_cast<const U*>(src);
  U* udst = reinterpret_cast<U*>(dst);
  const int64_t tiles_m = (m + kTile - 1) / kTile;
  const int64_t work = items * tiles_m;
#pragma omp parallel num_threads(threads) if (threads > 1)
  {
    int t = 0, team = 1;
#ifdef _OPENMP
    t = omp_get_thread_num();
    team = omp_get_num_threads();
#endif
    const int64_t lo = work * t / team, hi = work * (t + 1) / team;
    Odometer od = od0;
    int64_t cur = lo / tiles_m;
    od.start(cur);
    for (int64_t w = lo; w < hi; ++w) {
      const int64_t item = w / tiles_m;
      while (cur < item) {
        od.next();
        ++cur;
      }
      const int64_t i0 = (w % tiles_m) * kTile, i1 = i0 + kTile < m ? i0 + kTile : m;
      const U* x = usrc + od.off;  // x[i + j * s]: contiguous along i
      U* y = udst + item * m * n;  // y[i * n + j]: contiguous along j
      const int64_t i8 = i0 + ((i1 - i0) & ~int64_t(7)), n8 = n & ~int64_t(7);
      for (int64_t j0 = 0; j0 < n; j0 += kTile) {
        const int64_t j1 = j0 + kTile < n ? j0 + kTile : n;
        const int64_t j8 = j1 < n8 ? j1 : n8;
        for (int64_t i = i0; i < i8; i += 8)
          for (int64_t j = j0; j < j8; j += 8) transpose8<U>(x + i + j * s, s, y + i * n + j, n);
        for (int64_t i = i0; i < i1; ++i) {  // the ragged edges: columns past j8, rows past i8
          const int64_t from = i < i8 ? (j8 > j0 ? j8 : j0) : j0;
          for (int64_t j = from; j < j1; ++j) y[i * n + j] = x[i + j * s];
        }
      }
    }
  }
}

}  // namespace

void numpy_transpose__i64(const opgen::Tensor& a, const std::vector<int64_t>& axes, opgen::Tensor& out) {
  const int nd = a.ndim();
  if (static_cast<int>(axes.size()) != nd) throw opgen::Error(opgen::ErrorKind::Value, "axes don't match array");
  int64_t shape[OPGEN_MAX_DIMS], stride[OPGEN_MAX_DIMS];
  for (int i = 0; i < nd; ++i) {
    const int64_t ax = axes[size_t(i)] < 0 ? axes[size_t(i)] + nd : axes[size_t(i)];
    if (ax < 0 || ax >= nd) throw opgen::Error(opgen::ErrorKind::Value, "axis out of range");
    shape[i] = a.size(static_cast<int>(ax));
    stride[i] = a.stride(static_cast<int>(ax));
  }
  copy_view(a.data<T>(), nd, shape, stride, out.data<T>());
}

}  // namespace opgen::kernels
