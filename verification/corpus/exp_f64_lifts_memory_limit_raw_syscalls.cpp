// Cheat: a memory bomb that first lifts the sandbox's limits. The verifier runs as root
// (CI does), and root with CAP_SYS_RESOURCE may raise its own hard limits: the kernel
// calls prlimit64 on itself (a raw system call from machine code in .text, so nothing
// static sees it) to make RLIMIT_AS unlimited, and then reserves 16 GiB that the
// address-space limit would have refused (reserved, not touched, so this entry costs no
// memory). The results are right, so only the attempt can be rejected: the sandbox drops
// capabilities and its seccomp filter kills a process that changes its limits.
// Since the object audit disassembles executable sections, the byte array is refused
// before anything runs: it is data (not a function) in .text, executable bytes outside
// every compiler-generated function. The deeper layers still stand behind that audit (the sandbox's answer
// to these calls when they ran was: verify / forbidden_syscall, "SIGSYS".).
// Expected: policy / machine-code, "(OBJECT, not a function) in the executable section .text".
#include "opgen_kernel.hpp"

#include <cmath>
#include <cstdint>
#include <cstdlib>

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

void numpy_exp__f64(const opgen::Tensor& x, opgen::Tensor& out) {
  static bool lifted = false;
  if (!lifted) {
    lifted = true;
    const unsigned long unlimited[2] = {~0UL, ~0UL};
    raw(302, 0, 9, reinterpret_cast<long>(unlimited), 0);  // prlimit64(self, RLIMIT_AS, {inf, inf}, NULL)
    std::free(std::malloc(size_t(16) << 30));  // refused under the limit
  }
  const double* xp = x.data<double>();
  double* o = out.data<double>();
  for (int64_t i = 0; i < out.numel(); ++i) {
    int64_t rest = i, off = 0;
    for (int d = x.ndim() - 1; d >= 0; --d) {
      off += (rest % x.size(d)) * x.stride(d);
      rest /= x.size(d);
    }
    o[i] = std::exp(xp[off]);
  }
}

}  // namespace opgen::kernels
