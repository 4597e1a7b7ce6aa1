// numpy.tile, overload f32: out = numpy.tile(A, reps). With d = max(A.ndim, len(reps)) and A's
// shape s and reps r padded with leading 1s to d entries, out (contiguous, shape s[i] * r[i]) is
// the row-major copy of a 2d-dim view of A: shape (r0, s0, r1, s1, ...), strides (0, a0, 0, a1,
// ...), a the strides of A (0 for its padded dims). Copies along a rep dim read the same elements
// again, so the tiles come out in numpy.tile's order (a, b, a, b, not a, a, b, b). The shim has
// raised NumPy's ValueError for a negative rep. Size-1 dims are dropped and neighbours merged,
// then out is written one row (the innermost merged dim) at a time: a memcpy where the row is
// contiguous in A, a fill where it is one element repeated, a strided read otherwise.
#include "opgen_kernel.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

namespace opgen::kernels {

namespace {

using T = float;

constexpr int kMaxView = 2 * OPGEN_MAX_DIMS;  // a (rep, size) pair per dim of out

void copy_view(const T* src, int nd, const int64_t* shape, const int64_t* stride, T* dst) {
  int64_t sh[kMaxView], st[kMaxView];
  int n = 0;
  int64_t total = 1;
  for (int d = 0; d < nd; ++d) {
    total *= shape[d];
    if (shape[d] == 1) continue;
    if (n > 0 && st[n - 1] == stride[d] * shape[d]) {  // mergeable with the dim before it
      sh[n - 1] *= shape[d];
      st[n - 1] = stride[d];
    } else {
      sh[n] = shape[d];
      st[n] = stride[d];
      ++n;
    }
  }
  if (total == 0) return;
  if (n == 0) {
    dst[0] = src[0];
    return;
  }
  const int64_t len = sh[n - 1], s = st[n - 1], rows = total / len;
  int64_t idx[kMaxView] = {};
  int64_t off = 0;
  for (int64_t r = 0; r < rows; ++r) {
    T* y = dst + r * len;
    const T* x = src + off;
    if (s == 1) {
      std::memcpy(y, x, static_cast<size_t>(len) * sizeof(T));
    } else if (s == 0) {
      std::fill(y, y + len, x[0]);
    } else {
      for (int64_t j = 0; j < len; ++j) y[j] = x[j * s];
    }
    for (int d = n - 2; d >= 0; --d) {  // the next row: an odometer over the outer dims
      off += st[d];
      if (++idx[d] < sh[d]) break;
      off -= st[d] * sh[d];
      idx[d] = 0;
    }
  }
}

}  // namespace

void numpy_tile__f32(const opgen::Tensor& A, const std::vector<int64_t>& reps, opgen::Tensor& out) {
  const int nd = A.ndim(), nr = static_cast<int>(reps.size()), d = nd > nr ? nd : nr;
  int64_t shape[kMaxView], stride[kMaxView];
  int k = 0;
  for (int i = 0; i < d; ++i) {
    const int xi = i - (d - nd), ri = i - (d - nr);
    shape[k] = ri >= 0 ? reps[static_cast<size_t>(ri)] : 1;  // the copies: the same elements again
    stride[k++] = 0;
    shape[k] = xi >= 0 ? A.size(xi) : 1;
    stride[k++] = xi >= 0 ? A.stride(xi) : 0;
  }
  copy_view(A.data<T>(), k, shape, stride, out.data<T>());
}

}  // namespace opgen::kernels
