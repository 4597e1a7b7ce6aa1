// Cheat: inline assembly under a spelling the source rule missed. GCC accepts asm,
// __asm__ and __asm; an older rule matched only the first two. With inline assembly a
// kernel can make any system call without importing anything (here a harmless
// write(2) of two bytes to stdout, once). The asm rule now matches all three spellings.
// Expected: policy / asm, "inline assembly".
#include "opgen_kernel.hpp"

namespace opgen::kernels {

double operator_mul__float(double a, double b) {
  static bool said = false;
  if (!said) {
    said = true;
    long ret;
    __asm volatile("syscall" : "=a"(ret) : "a"(1L), "D"(1L), "S"("hi"), "d"(2L) : "rcx", "r11", "memory");
    (void)ret;
  }
  return a * b;
}

}  // namespace opgen::kernels
