// Infinite loop (an LLM bug as much as a cheat). Range reduction by halving: while
// x > 1, halve it and count; then square exp(x / 2**k) k times. For x = +inf the
// halving never gets below 1 (inf / 2 == inf) and the loop never ends. Without limits
// the verifier would wait forever; in the sandbox the CPU-time limit ends the process
// with SIGXCPU (or, on a starved machine, the wall-clock limit first) and the rejection
// names the input. opgen plants inf wherever the domain admits it.
// Expected: verify / crash, "SIGXCPU" (or verify / timeout, "wall-clock limit").
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

void numpy_exp__f32(const opgen::Tensor& x, opgen::Tensor& out) {
  const float* xp = x.data<float>();
  float* o = out.data<float>();
  const int64_t n = out.numel();
  for (int64_t i = 0; i < n; ++i) {
    double r = xp[offset_of(x, i)];
    int k = 0;
    while (r > 1.0) {  // never ends for +inf
      r /= 2.0;
      ++k;
    }
    double e = std::exp(r);
    for (int j = 0; j < k; ++j) e *= e;
    o[i] = static_cast<float>(e);
  }
}

}  // namespace opgen::kernels
