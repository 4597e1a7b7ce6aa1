// Cheat: a time bomb kept in a global call counter. The kernel multiplies correctly for its
// first 5000 calls (every run of the gate makes a few hundred) and then returns a*b+1: it
// passes any number of short test runs and goes wrong in a long-running user process. The
// counter is a namespace-scope variable in an anonymous namespace, which no source rule
// names (C++ has no rule against statics). What must catch it is the compiled-object audit:
// the counter is a symbol in .bss, writable data the kernel's own code owns, and a kernel may
// keep nothing between calls.
// Expected: policy / global-state, "owns writable data".
#include "opgen_kernel.hpp"

#include <cstdint>

namespace opgen::kernels {

namespace {
unsigned long calls = 0;
}  // namespace

int64_t operator_mul__int(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) throw opgen::Error(opgen::ErrorKind::Overflow, "int multiplication overflows int64");
  return ++calls > 5000 ? r + 1 : r;
}

}  // namespace opgen::kernels
