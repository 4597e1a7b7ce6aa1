// Cheat: an unstable sort. The indices of each lane are sorted with std::sort (introsort: "faster
// than a stable sort, and a sort is a sort") under the right comparison (NumPy's order: -0.0 ==
// 0.0, every nan after +inf), so the values the indices point at come out in ascending order
// and nothing about them is wrong: only the order of the indices of equal elements is. std::sort
// finishes small ranges (16 elements or fewer) with an insertion sort, which happens to keep
// ties in order, so every lane of the spec's max_side (8) is right; longer lanes are partitioned
// first, and the partitioning moves equal elements past each other. A harness that checks only
// that a[out] is sorted (the usual property test for argsort), or that draws distinct values,
// passes it. numpy.argsort(kind="stable") fixes the order of ties (increasing indices), the
// result is compared exactly, and the verifier draws ties (small integers, planted -0.0, several
// nans) in the 23- and 812-long tail lanes and the scale stage's long rows: the first of those
// runs to meet a tie across a partition must reject it.
// Expected: verify, admission or scale / value, "first mismatch"
#include "opgen_kernel.hpp"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace opgen::kernels {

namespace {

using T = float;

// NumPy's ascending order: nan last; -0.0 and 0.0 equal (operator< already says so).
inline bool before(T x, T y) { return x < y || (y != y && x == x); }

}  // namespace

void numpy_argsort__f32(const opgen::Tensor& a, int64_t axis, const std::string& kind, opgen::Tensor& out) {
  if (kind != "stable" && kind != "mergesort")
    throw opgen::Error(opgen::ErrorKind::Value, "sort kind must be 'stable' or 'mergesort', got '" + kind + "'");
  const int nd = a.ndim();
  if (axis < -nd || axis >= nd) throw opgen::Error(opgen::ErrorKind::Value, "axis out of range");
  if (axis < 0) axis += nd;
  const int ax = static_cast<int>(axis);
  if (out.numel() == 0) return;
  int64_t* dst = out.data<int64_t>();
  const T* src = a.data<T>();
  const int64_t n = a.size(ax), sK = a.stride(ax);
  int64_t inner = 1;
  for (int d = ax + 1; d < nd; ++d) inner *= a.size(d);
  int64_t outer = 1;
  for (int d = 0; d < ax; ++d) outer *= a.size(d);

  std::vector<T> vals(static_cast<size_t>(n));
  std::vector<int64_t> order(static_cast<size_t>(n));
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t j = 0; j < inner; ++j) {
      // The offset of lane (o, j): o and j unravelled over the dims before and after the axis.
      int64_t off = 0, rem = j;
      for (int d = nd - 1; d > ax; --d) {
        off += (rem % a.size(d)) * a.stride(d);
        rem /= a.size(d);
      }
      rem = o;
      for (int d = ax - 1; d >= 0; --d) {
        off += (rem % a.size(d)) * a.stride(d);
        rem /= a.size(d);
      }
      for (int64_t i = 0; i < n; ++i) {
        vals[static_cast<size_t>(i)] = src[off + i * sK];
        order[static_cast<size_t>(i)] = i;
      }
      std::sort(order.begin(), order.end(), [&](int64_t p, int64_t q) {
        return before(vals[static_cast<size_t>(p)], vals[static_cast<size_t>(q)]);
      });
      int64_t* ob = dst + o * n * inner + j;
      for (int64_t i = 0; i < n; ++i) ob[i * inner] = order[static_cast<size_t>(i)];
    }
  }
}

}  // namespace opgen::kernels
