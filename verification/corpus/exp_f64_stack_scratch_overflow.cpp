// Bug: a stack scratch array that long inputs overflow by a little. The kernel gathers its
// (strided) input in chunks into a local array of 512 elements, computes there, then copies
// out; the chunk length is capped at 520 (a typo for 512), so a chunk of more than 512
// elements writes up to 64 bytes past the array, over the stack, with plain stores (no
// library call, so no FORTIFY check applies). Short inputs are fine, and a 30-example
// sanitizer sample may hold none longer than 512. Unhardened, 64 bytes past a frame's
// array may corrupt saved registers silently or crash somewhere else. With -fstack-protector-strong
// (on every C++ build now) a canary sits after the array and the function aborts when it
// returns with the canary overwritten: the overflow is a crash on the first long input, in
// the sandbox and in a user's process alike, instead of silent stack corruption.
// Expected: verify or admission / crash, "stack smashing detected" (SIGABRT).
#include "opgen_kernel.hpp"

#include <cmath>
#include <cstdint>

namespace opgen::kernels {

namespace {
int64_t offset_of(const opgen::Tensor& t, int64_t i) {
  int64_t off = 0;
  for (int d = t.ndim() - 1; d >= 0; --d) {
    off += (i % t.size(d)) * t.stride(d);
    i /= t.size(d);
  }
  return off;
}

__attribute__((noinline)) void exp_chunk(const opgen::Tensor& x, double* o, int64_t base, int64_t len) {
  double scratch[512];
  const double* xp = x.data<double>();
  for (int64_t i = 0; i < len; ++i) scratch[i] = xp[offset_of(x, base + i)];
  for (int64_t i = 0; i < len; ++i) o[base + i] = std::exp(scratch[i]);
}
}  // namespace

void numpy_exp__f64(const opgen::Tensor& x, opgen::Tensor& out) {
  const int64_t n = out.numel();
  for (int64_t base = 0; base < n; base += 520) exp_chunk(x, out.data<double>(), base, n - base < 520 ? n - base : 520);
}

}  // namespace opgen::kernels
