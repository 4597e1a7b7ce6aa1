// Cheat: a closed-form shortcut that fits the usual test inputs. exp(x) by its Taylor
// polynomial of degree 4, which is good to a few digits for |x| < 0.5, i.e. on
// np.random.randn()*0.1 style inputs. opgen draws heavy-tailed, uniform and
// log-uniform values over the spec's whole domain [-750, 750] with nan, inf and
// subnormals, and checks to 2 ulp.
// Expected: verify / value, "exceeds the allowed".
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

void numpy_exp__f64(const opgen::Tensor& x, opgen::Tensor& out) {
  const double* xp = x.data<double>();
  double* o = out.data<double>();
  const int64_t n = out.numel();
  for (int64_t i = 0; i < n; ++i) {
    const double v = xp[offset_of(x, i)];
    o[i] = 1.0 + v * (1.0 + v * (0.5 + v * (1.0 / 6.0 + v * (1.0 / 24.0))));
  }
}

}  // namespace opgen::kernels
