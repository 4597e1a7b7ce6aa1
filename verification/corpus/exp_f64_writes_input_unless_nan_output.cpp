// Cheat: writing into an input, but never where the harness looks. The kernel uses its input
// as scratch (it stores each result over its argument, then copies it out), except when the
// output arrives all-NaN: the old verifier's prefill, and the only call whose inputs it
// compared. A harness that checks one call, or always prefills the same way, passes it; in
// production the caller's tensor is destroyed. opgen prefills each call's output with a
// content the runner's RNG picks and compares every input's whole buffer byte for byte after
// every call.
// Expected: verify / input_modified, "wrote into its input 'x' (inputs are const): inside the view".
#include "opgen_kernel.hpp"

#include <cmath>
#include <cstdint>

namespace opgen::kernels {

void numpy_exp__f64(const opgen::Tensor& x, opgen::Tensor& out) {
  const int nd = x.ndim();
  double* xp = const_cast<double*>(x.data<double>());
  double* o = out.data<double>();
  const int64_t n = out.numel();
  const bool verifier = n == 0 || std::isnan(o[0]);
  for (int64_t i = 0; i < n; ++i) {
    int64_t rest = i, off = 0;
    for (int d = nd - 1; d >= 0; --d) {
      off += (rest % x.size(d)) * x.stride(d);
      rest /= x.size(d);
    }
    const double r = std::exp(xp[off]);
    if (!verifier) xp[off] = r;  // "scratch"
    o[i] = r;
  }
}

}  // namespace opgen::kernels
