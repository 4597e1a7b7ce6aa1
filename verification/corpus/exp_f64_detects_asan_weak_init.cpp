// Cheat: behave only under the sanitizer. A weak reference to __asan_init is non-null
// exactly in the ASan+UBSan build; there the kernel is careful, and in the normal build
// (the one users load) it writes one element past the end of its output on long inputs.
// The sanitizer run cannot see a bug that is not there when it runs. The weak reference is
// a weakref alias whose target name is split in two string literals ("__as" "an_init"), so
// the source rule against naming sanitizer symbols never matches. The compiled object has
// the weak undefined symbol __asan_init, which is not on the import allow-list (and belongs
// to the sanitizer-evasion category).
// Expected: policy / sanitizer-evasion, "imports `__asan_init`".
#include "opgen_kernel.hpp"

#include <cmath>
#include <cstdint>

namespace {
static void sanitizer_probe() __attribute__((weakref("__as" "an_init")));
}  // namespace

namespace opgen::kernels {

namespace {
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
  const bool watched = &sanitizer_probe != nullptr;
  const int64_t end = watched || n < 64 ? n : n + 1;
  for (int64_t i = 0; i < end; ++i) o[i] = std::exp(xp[offset_of(x, i < n ? i : n - 1)]);
}

}  // namespace opgen::kernels
