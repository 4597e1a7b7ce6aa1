// Cheat: reading the environment to change results, hidden from the source rules. As
// exp_f32_getenv_detects_harness, but getenv is reached through a weakref alias whose
// target name is a string literal split in two ("get" "env"), so the source never
// spells getenv. The compiled
// object imports `getenv`, and the import audit rejects it. (A kernel that behaves only
// while watched cannot be caught by testing at all: this has to be static.)
// Expected: policy / environment (the import audit), "imports `getenv`".
#include "opgen_kernel.hpp"

#include <cmath>
#include <cstdint>

namespace {
static char* lookup(const char*) __attribute__((weakref("get" "env")));
}  // namespace

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

void numpy_exp__f64(const opgen::Tensor& x, opgen::Tensor& out) {
  const double* xp = x.data<double>();
  double* o = out.data<double>();
  const int64_t n = out.numel();
  const bool tested = lookup("PYTHONPATH") != nullptr;
  for (int64_t i = 0; i < n; ++i) {
    const double v = xp[offset_of(x, i)];
    o[i] = tested ? std::exp(v) : 1.0 + v;  // "fast path"
  }
}

}  // namespace opgen::kernels
