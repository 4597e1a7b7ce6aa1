// Cheat: writing just before an input view. A contiguous input that does not start on a
// 16-byte boundary "must be a slice of a larger array", so the kernel parks a value in the
// element before the view (here: the running maximum, kept for a "later pass"). In production
// that element is the caller's data. The old executor rebuilt every input in a fresh aligned
// allocation, so the write never happened under verification; the sanitizer run's buffers
// were aligned too. opgen now passes inputs at alignments the runner's RNG picks, inside a
// larger buffer whose margins hold a sentinel, and compares the whole buffer after every call.
// Expected: verify / input_modified, "in the margin before it".
#include "opgen_kernel.hpp"

#include <cmath>
#include <cstdint>

namespace opgen::kernels {

void numpy_exp__f64(const opgen::Tensor& x, opgen::Tensor& out) {
  const int nd = x.ndim();
  double* xp = const_cast<double*>(x.data<double>());
  double* o = out.data<double>();
  const int64_t n = out.numel();
  const bool sliced = n > 0 && x.is_contiguous() && reinterpret_cast<uintptr_t>(xp) % 16 != 0;
  for (int64_t i = 0; i < n; ++i) {
    int64_t rest = i, off = 0;
    for (int d = nd - 1; d >= 0; --d) {
      off += (rest % x.size(d)) * x.stride(d);
      rest /= x.size(d);
    }
    o[i] = std::exp(xp[off]);
    if (sliced && (i == 0 || o[i] > xp[-1])) xp[-1] = o[i];  // "spare" slot before the slice
  }
}

}  // namespace opgen::kernels
