// Cheat: tiles in the wrong order. The copies along each dim are interleaved element by element
// (a, a, b, b: numpy.repeat along every dim, or torch's repeat_interleave) instead of whole
// blocks (a, b, a, b). The shape is right, every element is one of A's, and wherever a tiled dim
// has length 1 (a (1, 128, 384) table repeated over a batch: the bench case, and most uses in
// models) or a rep is 1 the result is the same: a test of those shapes, or of the result's shape
// and values as a multiset, passes it. The verifier draws reps above 1 along dims longer than 1,
// and the comparison is exact and positional.
// Expected: verify, admission or scale / value, "first mismatch"
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
    shape[k] = xi >= 0 ? A.size(xi) : 1;  // each element, then its copies: numpy.repeat's order
    stride[k++] = xi >= 0 ? A.stride(xi) : 0;
    shape[k] = ri >= 0 ? reps[static_cast<size_t>(ri)] : 1;
    stride[k++] = 0;
  }
  copy_view(A.data<T>(), k, shape, stride, out.data<T>());
}

}  // namespace opgen::kernels
