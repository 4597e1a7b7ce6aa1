// numpy.arange, overload i64: out[i] = start + i*step over the length the shim computed from the
// bounds (ceil((stop - start) / step), its errors raised before the kernel runs). Computed in
// uint64 so that no intermediate is signed overflow (undefined in C++); the values themselves fit,
// since every one lies between start and stop.
#include "opgen_kernel.hpp"

#include <cstdint>

namespace opgen::kernels {

void numpy_arange__i64(int64_t start, int64_t stop, int64_t step, opgen::Tensor& out) {
  (void)stop;  // the length, already out's
  int64_t* y = out.data<int64_t>();
  const int64_t n = out.numel();
  const uint64_t s = static_cast<uint64_t>(start), d = static_cast<uint64_t>(step);
  for (int64_t i = 0; i < n; ++i) y[i] = static_cast<int64_t>(s + static_cast<uint64_t>(i) * d);
}

}  // namespace opgen::kernels
