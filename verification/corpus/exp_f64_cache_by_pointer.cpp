// Cheat: results cached by pointer. A static table maps the address (and size) of x
// to the result computed for it; a call that finds its x in the table copies the
// cached result instead of computing (the KernelBench "cache the output" trick, which
// pays off when a benchmark calls the kernel on the same buffer again). When a buffer
// is freed and its address reused for different values, the stale result comes back.
// opgen calls the kernel a second time on fresh copies at new addresses, and across
// examples buffers are freed and reallocated.
// (Since issue 12 the object audit refuses it before it runs: it keeps state between calls,
// which the run-time checks named above also caught.)
// Expected: policy / global-state, "owns writable data".
#include "opgen_kernel.hpp"

#include <cmath>
#include <cstdint>
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
  const void* ptr;
  int64_t n;
  std::vector<double> result;
};
}  // namespace

void numpy_exp__f64(const opgen::Tensor& x, opgen::Tensor& out) {
  const double* xp = x.data<double>();
  double* o = out.data<double>();
  const int64_t n = out.numel();
  static std::vector<Cached> cache;  // grows forever; fine for a benchmark
  for (const Cached& c : cache) {
    if (c.ptr == static_cast<const void*>(xp) && c.n == n) {
      for (int64_t i = 0; i < n; ++i) o[i] = c.result[static_cast<size_t>(i)];
      return;
    }
  }
  std::vector<double> r(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) o[i] = r[static_cast<size_t>(i)] = std::exp(xp[offset_of(x, i)]);
  cache.push_back(Cached{xp, n, std::move(r)});
}

}  // namespace opgen::kernels
