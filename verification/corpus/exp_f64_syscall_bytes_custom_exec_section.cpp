// Cheat: a dormant payload in an executable section with a made-up name. The kernel
// computes exp honestly; it also carries x86-64 machine code (a raw system-call stub:
// mov rax,rdi; syscall; ret) in a byte array placed in a custom section, ".fastpath", whose
// flags are injected through the section attribute ("ax": allocated and executable). The
// stub runs only when the input holds a magic value that no random sample produces, so
// the sandbox (seccomp, Landlock) never sees a system call; in a user's process (a compiled
// library, opgen bench, opgen.host: all unsandboxed) a crafted input makes it run. No
// inline assembly, no import, no load-time code, no section named .text. The object audit
// disassembles every executable section whatever its name: the array is data, not a
// function, in an executable section, and its bytes hold a syscall instruction.
// Expected: policy / machine-code, "executable section .fastpath".
#include "opgen_kernel.hpp"

#include <cmath>
#include <cstdint>

namespace opgen::kernels {

namespace {
__attribute__((section(".fastpath,\"ax\",@progbits#"))) const unsigned char kStub[] = {
    0x48, 0x89, 0xf8, 0x0f, 0x05, 0xc3};

int64_t offset_of(const opgen::Tensor& t, int64_t i) {
  int64_t off = 0;
  for (int d = t.ndim() - 1; d >= 0; --d) {
    off += (i % t.size(d)) * t.stride(d);
    i /= t.size(d);
  }
  return off;
}
}  // namespace

void numpy_exp__f64(const opgen::Tensor& x, opgen::Tensor& out) {
  const double* xp = x.data<double>();
  double* o = out.data<double>();
  const int64_t n = out.numel();
  for (int64_t i = 0; i < n; ++i) {
    const double v = xp[offset_of(x, i)];
    if (v == 1234.5678) reinterpret_cast<long (*)(long)>(reinterpret_cast<uintptr_t>(kStub))(39);  // getpid
    o[i] = std::exp(v);
  }
}

}  // namespace opgen::kernels
