// A plain elementwise candidate for numpy.exp (f64), used to measure gate latency.
#include "opgen_kernel.hpp"
#include <cmath>

namespace opgen::kernels {
void numpy_exp__f64(const opgen::Tensor& x, opgen::Tensor& out) {
  const double* xp = x.data<double>();
  double* o = out.data<double>();
  const int64_t n = out.numel();
  if (x.is_contiguous()) {
    for (int64_t i = 0; i < n; ++i) o[i] = std::exp(xp[i]);
    return;
  }
  const int nd = x.ndim();
  for (int64_t i = 0; i < n; ++i) {
    int64_t rest = i, off = 0;
    for (int d = nd - 1; d >= 0; --d) {
      off += (rest % x.size(d)) * x.stride(d);
      rest /= x.size(d);
    }
    o[i] = std::exp(xp[off]);
  }
}
}  // namespace opgen::kernels
