// torch.topk, overload f32: the k largest (or smallest) elements along dim and their indices.
//
// Each lane along dim is copied to a contiguous buffer (any input strides), then its indices are
// ordered by a strict total order: NaN larger than every number, then the value (largest first
// when `largest`, else smallest first), then the index (the lower first, so ties are ordered as
// the spec fixes them; 0.0 and -0.0 compare equal and so tie). std::partial_sort puts the first k
// in that order (O(n log k): top-50 of a 30522-long row reads the row once); k == n sorts the
// whole lane. `sorted` false gives the same order (the spec fixes it). Results are written
// through their own strides. A 0-d input has one element: it and index 0.
#include "opgen_kernel.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <vector>

namespace opgen::kernels {

namespace {

using T = float;

inline bool is_nan(T v) { return v != v; }

// Whether element i (value a) comes before element j (value b) in the result.
inline bool before(T a, int64_t i, T b, int64_t j, bool largest) {
  const bool an = is_nan(a), bn = is_nan(b);
  if (an || bn) {
    if (an && bn) return i < j;
    return largest ? an : bn;  // NaN is the largest: first when largest, last otherwise
  }
  if (a != b) return largest ? a > b : a < b;
  return i < j;
}

}  // namespace

void torch_topk__f32(const opgen::Tensor& input, int64_t k, int64_t dim, bool largest, bool sorted,
                     opgen::Tensor& values, opgen::Tensor& indices) {
  (void)sorted;  // the spec fixes one order either way
  const T* x = input.data<T>();
  T* vo = values.data<T>();
  int64_t* io = indices.data<int64_t>();
  const int nd = input.ndim();
  if (nd == 0) {
    vo[0] = x[0];
    io[0] = 0;
    return;
  }
  const int ax = static_cast<int>(dim < 0 ? dim + nd : dim);
  const int64_t n = input.size(ax);
  int64_t lanes = 1;
  for (int d = 0; d < nd; ++d)
    if (d != ax) lanes *= input.size(d);
  if (lanes == 0 || k == 0) return;
  const int64_t sx = input.stride(ax), sv = values.stride(ax), si = indices.stride(ax);
  std::vector<T> row(static_cast<size_t>(n));
  std::vector<int64_t> order(static_cast<size_t>(n));
  for (int64_t lane = 0; lane < lanes; ++lane) {
    // The lane's first element in each tensor: decode the lane number over the other dims.
    int64_t rem = lane, xo = 0, vo_off = 0, io_off = 0;
    for (int d = nd - 1; d >= 0; --d) {
      if (d == ax) continue;
      const int64_t size = input.size(d), at = rem % size;
      rem /= size;
      xo += at * input.stride(d);
      vo_off += at * values.stride(d);
      io_off += at * indices.stride(d);
    }
    for (int64_t j = 0; j < n; ++j) row[j] = x[xo + j * sx];
    std::iota(order.begin(), order.end(), int64_t{0});
    auto cmp = [&](int64_t i, int64_t j) { return before(row[i], i, row[j], j, largest); };
    if (k < n) std::partial_sort(order.begin(), order.begin() + k, order.end(), cmp);
    else std::sort(order.begin(), order.end(), cmp);
    for (int64_t j = 0; j < k; ++j) {
      vo[vo_off + j * sv] = row[order[j]];
      io[io_off + j * si] = order[j];
    }
  }
}

}  // namespace opgen::kernels
