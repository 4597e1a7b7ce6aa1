// Cheat: inputs modified. For accuracy the kernel sorts each slice by magnitude before
// adding (small terms first), in place in a's memory, casting away const. The sum is
// excellent; the caller's array is scrambled.
// Expected: verify / input_modified, "wrote into its input".
#include "opgen_kernel.hpp"

#include <cstdint>
#include <cmath>

namespace opgen::kernels {

namespace {

// Offset in a of output element i: a's dims without the reduced axis, row-major.
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

void numpy_sum__f64(const opgen::Tensor& a, int64_t axis, opgen::Tensor& out) {
  const int nd = a.ndim();
  if (axis < 0) axis += nd;
  const int ax = static_cast<int>(axis);
  const double* x = a.data<double>();
  double* o = out.data<double>();
  const int64_t n = out.numel(), len = a.size(ax), step = a.stride(ax);
  for (int64_t i = 0; i < n; ++i) {
    double* s = const_cast<double*>(x) + offset_skipping(a, i, ax);
    for (int64_t j = 1; j < len; ++j) {  // insertion sort by |value|, in place
      const double v = s[j * step];
      int64_t k = j - 1;
      for (; k >= 0 && std::fabs(s[k * step]) > std::fabs(v); --k) s[(k + 1) * step] = s[k * step];
      s[(k + 1) * step] = v;
    }
    long double acc = 0.0L;
    for (int64_t j = 0; j < len; ++j) acc += s[j * step];
    o[i] = static_cast<double>(acc);
  }
}

}  // namespace opgen::kernels
