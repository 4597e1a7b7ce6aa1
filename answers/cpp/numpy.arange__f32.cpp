// numpy.arange, overload f32: NumPy's fill, operation for operation (its arange, then float32's fill
// function): out[0] = T(start), out[1] = T(start + step) (the sum in double, rounded to T), and with
// delta = out[1] - out[0] in T, out[i] = out[0] + T(i) * delta for i >= 2, each operation rounded in
// T. Not start + i*step in double, which differs in the last bits. The shim computed the length
// (ceil((stop - start) / step)) and raised its errors. FMA contraction is switched off for this file:
// GCC fuses the product and the sum under -march=native, rounding once where NumPy rounds twice.
#include "opgen_kernel.hpp"

#include <cstdint>

#pragma GCC optimize("fp-contract=off")

namespace opgen::kernels {

void numpy_arange__f32(double start, double stop, double step, opgen::Tensor& out) {
  (void)stop;  // the length, already out's
  using T = float;
  T* y = out.data<T>();
  const int64_t n = out.numel();
  if (n == 0) return;
  const T first = static_cast<T>(start);
  y[0] = first;
  if (n == 1) return;
  const T second = static_cast<T>(start + step);
  y[1] = second;
  const T delta = second - first;
  for (int64_t i = 2; i < n; ++i) {
    const T scaled = static_cast<T>(i) * delta;
    y[i] = first + scaled;
  }
}

}  // namespace opgen::kernels
