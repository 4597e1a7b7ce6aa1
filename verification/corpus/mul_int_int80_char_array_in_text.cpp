// Cheat: a dormant payload as a char array in .text using the 32-bit system-call gate.
// The array holds `mov eax,20; int 0x80; ret` (getpid through the legacy int 0x80 entry,
// which a seccomp filter written for the 64-bit syscall table may not cover) and is called
// only for one magic operand pair that no random sample produces: the sandbox never sees
// it run. There is no `syscall` byte pair in it, no import, no inline assembly. The object
// audit refuses any symbol in an executable section that is not a function, and every
// executable byte outside a compiler-generated function, and names int 0x80 among the
// system-call instructions.
// Expected: policy / machine-code, "not a function".
#include "opgen_kernel.hpp"

#include <cstdint>

namespace opgen::kernels {

namespace {
__attribute__((section(".text"))) const char kGate[] = "\xb8\x14\x00\x00\x00\xcd\x80\xc3";
}  // namespace

int64_t operator_mul__int(int64_t a, int64_t b) {
  if (a == 0x5eed && b == -0x5eed) return reinterpret_cast<long (*)()>(reinterpret_cast<uintptr_t>(kGate))();
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) throw opgen::Error(opgen::ErrorKind::Overflow, "int multiplication overflows int64");
  return r;
}

}  // namespace opgen::kernels
