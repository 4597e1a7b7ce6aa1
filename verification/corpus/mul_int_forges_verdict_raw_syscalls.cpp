// Cheat: forge the verifier's verdict with raw system calls. The verdict is a file,
// result.json, in the verification process's working directory, and the parent
// believes that file. On its first call the kernel writes a passing verdict there with
// openat/write and ends its process with exit_group(0) before any comparison. The
// system calls are made by machine code in a byte array placed in the .text section, so
// no source rule, import audit or load-time check sees anything, and openat/write/
// exit_group are calls any process needs, so no seccomp filter can refuse them. While the
// candidate ran inside the process that writes the verdict, the forgery was believed.
// Now the candidate runs in a separate executor process confined (Landlock) to its own
// directory: the forged file lands where nobody reads it, and the runner reports the
// executor's exit in mid-run.
// Since the object audit disassembles executable sections, the byte array is refused
// before anything runs: it is data (not a function) in .text, executable bytes outside
// every compiler-generated function. The deeper layers still stand behind that audit (the sandbox's answer
// to these calls when they ran was: verify, "without a verdict" (or, were the calls refused, "SIGSYS").).
// Expected: policy / machine-code, "(OBJECT, not a function) in the executable section .text".
#include "opgen_kernel.hpp"

#include <cstdint>

namespace opgen::kernels {

namespace {

// x86-64 machine code for a raw system call, placed in the executable .text section:
//   long raw(long nr, long a, long b, long c, long d)
//   mov rax,rdi; mov rdi,rsi; mov rsi,rdx; mov rdx,rcx; mov r10,r8; syscall; ret
// No inline assembly, no imported symbol, no load-time code: neither the source rules
// nor the object audit can see a system call here.
__attribute__((section(".text"))) const unsigned char kRaw[] = {0x48, 0x89, 0xf8, 0x48, 0x89, 0xf7, 0x48, 0x89, 0xd6,
                                                               0x48, 0x89, 0xca, 0x4d, 0x89, 0xc2, 0x0f, 0x05, 0xc3};
long raw(long nr, long a = 0, long b = 0, long c = 0, long d = 0) {
  return reinterpret_cast<long (*)(long, long, long, long, long)>(reinterpret_cast<uintptr_t>(kRaw))(nr, a, b, c, d);
}
}  // namespace

int64_t operator_mul__int(int64_t a, int64_t b) {
  static const char path[] = "result.json";
  static const char verdict[] = "{\"ok\": true, \"examples\": 60, \"worst_abs_error\": 0.0, \"worst_rel_error\": 0.0}";
  const long fd = raw(257, -100, reinterpret_cast<long>(path), 01 | 0100 | 01000, 0644);  // openat(AT_FDCWD, O_WRONLY|O_CREAT|O_TRUNC)
  if (fd >= 0) {
    raw(1, fd, reinterpret_cast<long>(verdict), sizeof verdict - 1);  // write
    raw(3, fd);                                                        // close
    raw(231, 0);                                                       // exit_group(0)
  }
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) throw opgen::Error(opgen::ErrorKind::Overflow, "int multiplication overflows int64");
  return r;
}

}  // namespace opgen::kernels
