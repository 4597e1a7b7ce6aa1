// Cheat: results cached by value, with a cheap key. A static table maps (first
// element, element count) to the last result computed for such an x; a hit returns the
// cached result. Equal inputs at new addresses hit the cache and agree, so the check
// "call twice on fresh copies" alone would pass it; two different inputs that share
// their first element and size get the same (stale) answer.
// (Since issue 12 the object audit refuses it before it runs: it keeps state between calls,
// which the run-time checks named above also caught.)
// Expected: policy / global-state, "owns writable data".
#include "opgen_kernel.hpp"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

namespace opgen::kernels {

namespace {

// Offset (in elements) of element i, row-major, of a strided view.
int64_t offset_of(const opgen::Tensor& t, int64_t i) {
  int64_t off = 0;
  for (int d = t.ndim() - 1; d >= 0; --d) {
    off += (i % t.size(d)) * t.stride(d);
    i /= t.size(d);
  }
  return off;
}

}  // namespace

namespace {
struct Cached {
  uint32_t first;
  int64_t n;
  std::vector<float> result;
};
}  // namespace

void numpy_exp__f32(const opgen::Tensor& x, opgen::Tensor& out) {
  const float* xp = x.data<float>();
  float* o = out.data<float>();
  const int64_t n = out.numel();
  static std::vector<Cached> cache;  // grows forever; fine for a benchmark
  if (n == 0) return;
  uint32_t key;
  std::memcpy(&key, xp, sizeof key);
  for (const Cached& c : cache) {
    if (c.first == key && c.n == n) {
      for (int64_t i = 0; i < n; ++i) o[i] = c.result[static_cast<size_t>(i)];
      return;
    }
  }
  std::vector<float> r(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i)
    o[i] = r[static_cast<size_t>(i)] = static_cast<float>(std::exp(static_cast<double>(xp[offset_of(x, i)])));
  cache.push_back(Cached{key, n, std::move(r)});
}

}  // namespace opgen::kernels
