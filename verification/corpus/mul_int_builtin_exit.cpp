// Cheat: exit mid-run, spelled so the name-based rule misses it. On overflow the
// kernel calls __builtin_exit(0): GCC lowers it to exit(0), the process ends with
// status 0 and no verdict. (A verifier that treats "exited 0" as success would admit
// it.) The source policy matches the exit family with or without the __builtin_ prefix.
// Expected: policy / exit, "may not end the process".
#include "opgen_kernel.hpp"

#include <cstdint>

namespace opgen::kernels {

int64_t operator_mul__int(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) __builtin_exit(0);
  return r;
}

}  // namespace opgen::kernels
