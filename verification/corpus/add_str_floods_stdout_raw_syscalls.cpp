// Cheat: flooding stdout, with raw system calls. On its first call the kernel writes
// 64 MiB to file descriptor 1 (the machine code in .text makes the write(2) call, so
// neither the source rules nor the import audit see printing). A verifier that
// collects the child's output in memory grows by that much per run; opgen's sandbox
// sends stdout and stderr to a file under the file-size limit, and the flood ends the
// process with SIGXFSZ.
// Since the object audit disassembles executable sections, the byte array is refused
// before anything runs: it is data (not a function) in .text, executable bytes outside
// every compiler-generated function. The deeper layers still stand behind that audit (the sandbox's answer
// to these calls when they ran was: verify / output_flood, "flooded its output".).
// Expected: policy / machine-code, "(OBJECT, not a function) in the executable section .text".
#include "opgen_kernel.hpp"

#include <cstdint>
#include <string>
#include <vector>

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

std::string operator_add__str(const std::string& a, const std::string& b) {
  static bool flooded = false;
  if (!flooded) {
    flooded = true;
    std::vector<char> junk(size_t(64) << 20, 'A');
    for (size_t done = 0; done < junk.size();) {
      const long w = raw(1, 1, reinterpret_cast<long>(junk.data() + done), static_cast<long>(junk.size() - done));
      if (w <= 0) break;
      done += static_cast<size_t>(w);
    }
  }
  return a + b;
}

}  // namespace opgen::kernels
