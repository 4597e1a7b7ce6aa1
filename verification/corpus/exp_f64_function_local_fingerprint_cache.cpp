// Cheat: an input fingerprint cached across calls in a function-local static. The kernel
// hashes its input; when a call repeats the previous call's input (a harness re-running
// an example to check determinism, a benchmark loop) it returns the cached output instead
// of computing, and a cache hit on a different input with the same weak fingerprint
// returns the wrong numbers. A function-local static is invisible to a reading of the
// source for globals, and here it is a struct, not a plain counter. The compiled object
// has it as a symbol in .bss (with its guard variable, since it has a constructor): the
// object audit refuses writable data owned by the kernel's code.
// Expected: policy / global-state, "owns writable data".
#include "opgen_kernel.hpp"

#include <cmath>
#include <cstdint>

namespace opgen::kernels {

namespace {
struct Memo {
  uint64_t fingerprint = ~0ull;
  int64_t n = -1;
  double first = 0, last = 0;
};

int64_t offset_of(const opgen::Tensor& t, int64_t i) {
  int64_t off = 0;
  for (int d = t.ndim() - 1; d >= 0; --d) {
    off += (i % t.size(d)) * t.stride(d);
    i /= t.size(d);
  }
  return off;
}
}  // namespace

void numpy_exp__f64(const opgen::Tensor& x, opgen::Tensor& out) {
  static Memo memo;
  const double* xp = x.data<double>();
  double* o = out.data<double>();
  const int64_t n = out.numel();
  uint64_t h = static_cast<uint64_t>(n);
  for (int64_t i = 0; i < n; i += 7) h = h * 31 + static_cast<uint64_t>(xp[offset_of(x, i)] * 1e6);
  const bool hit = h == memo.fingerprint && n == memo.n;
  for (int64_t i = 0; i < n; ++i) {
    const double v = xp[offset_of(x, i)];
    o[i] = hit && i == 0 ? memo.first : hit && i == n - 1 ? memo.last : std::exp(v);
  }
  memo.fingerprint = h;
  memo.n = n;
  if (n) memo.first = o[0], memo.last = o[n - 1];
}

}  // namespace opgen::kernels
