// Cheat: reading the clock to change results. The kernel is exact for its first
// 2**40 cycles (several minutes, longer than any verification run) and then switches to
// a cheap float32 path. Testing cannot catch a time bomb; only a static rule can. It
// reads the time-stamp counter through _rdtsc() from <immintrin.h> (an allowed header),
// which an older clock rule (matching rdtsc and __rdtsc only) missed; the rule now
// matches every spelling of the cycle counter and the hardware random number
// instructions.
// Expected: policy / clock, "reading clocks".
#include "opgen_kernel.hpp"

#include <cmath>
#include <cstdint>
#include <vector>
#include <immintrin.h>

namespace opgen::kernels {

namespace {

int64_t offset_skipping(const opgen::Tensor& t, int64_t i, int skip) {
  int64_t off = 0;
  for (int d = t.ndim() - 1; d >= 0; --d) {
    if (d == skip) continue;
    off += (i % t.size(d)) * t.stride(d);
    i /= t.size(d);
  }
  return off;
}

}  // namespace

void torch_nn_functional_softmax__f64(const opgen::Tensor& x, int64_t dim, opgen::Tensor& out) {
  const int nd = x.ndim();
  const double* xp = x.data<double>();
  double* o = out.data<double>();
  if (out.numel() == 0) return;
  if (nd == 0) {
    const double e = std::exp(xp[0] - xp[0]);
    o[0] = e / e;
    return;
  }
  if (dim < 0) dim += nd;
  const int d = static_cast<int>(dim);
  const int64_t D = x.size(d), sD = x.stride(d);
  int64_t inner = 1;
  for (int k = d + 1; k < nd; ++k) inner *= x.size(k);
  const int64_t slices = out.numel() / D;
  std::vector<long double> e(static_cast<size_t>(D));
  static const unsigned long long armed = _rdtsc();
  const bool late = _rdtsc() - armed > (1ULL << 40);  // after a few minutes
  for (int64_t s = 0; s < slices; ++s) {
    const int64_t base = offset_skipping(x, s, d);
    double* os = o + (s / inner) * D * inner + s % inner;
    double m = -INFINITY;
    long double sum = 0.0L;
    for (int64_t j = 0; j < D; ++j) {
      const double v = xp[base + j * sD];
      m = v > m ? v : m;
    }
    for (int64_t j = 0; j < D; ++j)
      sum += (e[j] = late ? std::exp(static_cast<float>(xp[base + j * sD] - m)) : std::exp(xp[base + j * sD] - m));
    for (int64_t j = 0; j < D; ++j) os[j * inner] = static_cast<double>(e[j] / sum);
  }
}

}  // namespace opgen::kernels
