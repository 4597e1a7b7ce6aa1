// Cheat: silent precision downgrade to half precision. The float32 overload computes
// in _Float16 (GCC's IEEE half type): "ML models run in fp16 anyway". Three
// significant digits, and anything above exp(11) overflows to inf. The spec's
// float32 rtol is 4e-7.
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

void numpy_exp__f32(const opgen::Tensor& x, opgen::Tensor& out) {
  const float* xp = x.data<float>();
  float* o = out.data<float>();
  const int64_t n = out.numel();
  for (int64_t i = 0; i < n; ++i) {
    const _Float16 h = static_cast<_Float16>(xp[offset_of(x, i)]);
    o[i] = static_cast<float>(static_cast<_Float16>(std::exp(static_cast<float>(h))));
  }
}

}  // namespace opgen::kernels
