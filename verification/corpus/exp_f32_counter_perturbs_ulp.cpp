// Cheat: nondeterminism within tolerance. A static call counter nudges every result by
// one ulp on odd calls (standing in for a race, an uninitialised accumulator, or a
// summation order that depends on thread timing). Each result alone is within the
// float32 tolerance, so a single call per input passes; opgen calls twice on equal
// inputs at different addresses and requires identical results.
// (Since issue 12 the object audit refuses it before it runs: it keeps state between calls,
// which the run-time checks named above also caught.)
// Expected: policy / global-state, "owns writable data".
#include "opgen_kernel.hpp"

#include <cmath>
#include <cstdint>

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
int64_t calls = 0;
}  // namespace

void numpy_exp__f32(const opgen::Tensor& x, opgen::Tensor& out) {
  const float* xp = x.data<float>();
  float* o = out.data<float>();
  const int64_t n = out.numel();
  const bool odd = (calls++ & 1) != 0;
  for (int64_t i = 0; i < n; ++i) {
    const float r = static_cast<float>(std::exp(static_cast<double>(xp[offset_of(x, i)])));
    o[i] = odd ? std::nextafter(r, INFINITY) : r;
  }
}

}  // namespace opgen::kernels
