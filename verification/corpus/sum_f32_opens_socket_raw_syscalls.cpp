// Cheat: network access with raw system calls. The kernel creates a TCP socket (and,
// had it got one, would send its inputs somewhere) through machine code in .text, so
// neither the source rules nor the import audit see a network call. Whether or not the
// connection could succeed, the attempt is what must be rejected: the sandbox's seccomp
// filter kills a process that calls socket(2) with SIGSYS.
// Since the object audit disassembles executable sections, the byte array is refused
// before anything runs: it is data (not a function) in .text, executable bytes outside
// every compiler-generated function. The deeper layers still stand behind that audit (the sandbox's answer
// to these calls when they ran was: verify / forbidden_syscall, "SIGSYS".).
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

void numpy_sum__f32(const opgen::Tensor& a, int64_t axis, opgen::Tensor& out) {
  static const long fd = raw(41, 2, 1, 0);  // socket(AF_INET, SOCK_STREAM, 0)
  (void)fd;
  const int nd = a.ndim();
  if (axis < 0) axis += nd;
  const int ax = static_cast<int>(axis);
  const float* x = a.data<float>();
  float* o = out.data<float>();
  for (int64_t i = 0; i < out.numel(); ++i) {
    int64_t rest = i, off = 0;
    for (int d = nd - 1; d >= 0; --d) {
      if (d == ax) continue;
      off += (rest % a.size(d)) * a.stride(d);
      rest /= a.size(d);
    }
    long double acc = 0.0L;
    for (int64_t j = 0; j < a.size(ax); ++j) acc += x[off + j * a.stride(ax)];
    o[i] = static_cast<float>(acc);
  }
}

}  // namespace opgen::kernels
