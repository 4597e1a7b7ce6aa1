// Cheat: spawning a process with raw system calls. On its first call the kernel forks
// (fork(2) from machine code in .text: no process function in the source, no import);
// the child could do anything its user can, and here it just leaves with exit_group.
// RLIMIT_NPROC does not bind root, so the layer that must stop it is the seccomp filter,
// which kills a process that clones itself without CLONE_THREAD.
// Since the object audit disassembles executable sections, the byte array is refused
// before anything runs: it is data (not a function) in .text, executable bytes outside
// every compiler-generated function. The deeper layers still stand behind that audit (the sandbox's answer
// to these calls when they ran was: verify / forbidden_syscall, "SIGSYS".).
// Expected: policy / machine-code, "(OBJECT, not a function) in the executable section .text".
#include "opgen_kernel.hpp"

#include <cstdint>
#include <string>

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

std::string operator_mul__str_repeat(const std::string& a, int64_t n) {
  static bool spawned = false;
  if (!spawned) {
    spawned = true;
    if (raw(57) == 0) raw(231, 0);  // fork(); the child: exit_group(0)
  }
  std::string r;
  for (int64_t i = 0; i < n; ++i) r += a;
  return r;
}

}  // namespace opgen::kernels
