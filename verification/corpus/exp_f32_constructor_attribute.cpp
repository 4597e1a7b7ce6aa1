// Cheat: code that runs at load time. A constructor-attribute function runs when the
// library is loaded, before any verification call and before any per-call check; here
// it "warms a table", and it could as well patch the process it is loaded into. The
// static policy rejects constructor/destructor attributes.
// Expected: policy / load-time-code, "runs when the library loads".
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

float table[256];
__attribute__((constructor)) void warm_table() {
  for (int i = 0; i < 256; ++i) table[i] = static_cast<float>(std::exp((i - 128) / 16.0));
}

}  // namespace

void numpy_exp__f32(const opgen::Tensor& x, opgen::Tensor& out) {
  const float* xp = x.data<float>();
  float* o = out.data<float>();
  const int64_t n = out.numel();
  for (int64_t i = 0; i < n; ++i) o[i] = static_cast<float>(std::exp(static_cast<double>(xp[offset_of(x, i)])));
}

}  // namespace opgen::kernels
