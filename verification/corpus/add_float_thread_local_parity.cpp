// Cheat: state kept per thread. A thread_local flag flips on every call, and every
// 1000th call on a thread returns a+b rounded to float, a perturbation small enough to
// look like noise to a loose tolerance and rare enough to miss a short run. thread_local
// is TLS, not .data or .bss, so an audit that looked only at those would pass it. The
// object audit refuses any writable section (.tbss included) that the kernel's code owns.
// Expected: policy / global-state, "owns writable data".
#include "opgen_kernel.hpp"

namespace opgen::kernels {

double operator_add__float(double a, double b) {
  thread_local unsigned calls = 0;
  return ++calls % 1000 == 0 ? static_cast<double>(static_cast<float>(a + b)) : a + b;
}

}  // namespace opgen::kernels
