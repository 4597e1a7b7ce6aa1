// Cheat: exit or abort mid-run. On overflow the kernel calls abort() instead of
// raising OverflowError ("it never happens in practice"), which would take down the
// caller: the compiler's program, or a verifier that loads kernels in-process. The
// static policy names the call before anything is compiled.
// Expected: policy / exit, "may not end the process".
#include "opgen_kernel.hpp"

#include <cstdint>
#include <cstdlib>

namespace opgen::kernels {

int64_t operator_add__int(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) std::abort();  // "never happens in practice"
  return r;
}

}  // namespace opgen::kernels
