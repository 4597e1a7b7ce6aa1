// Cheat: detecting the harness by its output prefill. Every verification call used to hand the
// kernel an output filled with NaN, and a production caller's np.empty never is; so the kernel
// computes exactly when its output arrives all-NaN and otherwise takes a float32 shortcut
// (about 1e-7 relative error, far outside float64's tolerance). A harness with one fixed
// prefill passes it on every example. opgen prefills each call's output with a content the
// runner's RNG picks (the dtype's sentinel, garbage of the result's magnitude, zeros, another
// example's result, random bits) and every call must be right: the non-NaN calls are wrong.
// Expected: verify / value, "depends on what the output held before the call".
#include "opgen_kernel.hpp"

#include <cmath>
#include <cstdint>

namespace opgen::kernels {

void numpy_exp__f64(const opgen::Tensor& x, opgen::Tensor& out) {
  const int nd = x.ndim();
  const double* xp = x.data<double>();
  double* o = out.data<double>();
  const int64_t n = out.numel();
  bool all_nan = true;
  for (int64_t i = 0; i < n && all_nan; ++i) all_nan = std::isnan(o[i]);
  for (int64_t i = 0; i < n; ++i) {
    int64_t rest = i, off = 0;
    for (int d = nd - 1; d >= 0; --d) {
      off += (rest % x.size(d)) * x.stride(d);
      rest /= x.size(d);
    }
    o[i] = all_nan ? std::exp(xp[off]) : static_cast<double>(std::exp(static_cast<float>(xp[off])));
  }
}

}  // namespace opgen::kernels
