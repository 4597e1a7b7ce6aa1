// Cheat: reading the environment to change results. The kernel is correct only when
// it believes it is being tested (PYTHONPATH or OMP_NUM_THREADS set, as in the
// verifier's child process) and takes a cheap, wrong shortcut otherwise: it would pass
// every test and fail in production. No test can catch that; the static policy rejects
// getenv and friends by name.
// Expected: policy / environment, "environment".
#include "opgen_kernel.hpp"

#include <cmath>
#include <cstdint>

extern "C" char* getenv(const char*);

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

void numpy_exp__f32(const opgen::Tensor& x, opgen::Tensor& out) {
  const float* xp = x.data<float>();
  float* o = out.data<float>();
  const int64_t n = out.numel();
  const bool tested = getenv("PYTHONPATH") != nullptr || getenv("OMP_NUM_THREADS") != nullptr;
  for (int64_t i = 0; i < n; ++i) {
    const float v = xp[offset_of(x, i)];
    o[i] = tested ? static_cast<float>(std::exp(static_cast<double>(v))) : 1.0f + v;  // "fast path"
  }
}

}  // namespace opgen::kernels
