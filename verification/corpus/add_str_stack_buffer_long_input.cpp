// Bug: a fixed stack buffer that long inputs overflow. The kernel copies `a` into a
// 40-byte local buffer before appending `b`; short strings (most of a random sample, and
// maybe all of a 30-example sanitizer sample) are fine, a longer `a` writes past the buffer
// over the stack. Unhardened, that overflow corrupts the frame silently or not at all
// within a test run. Every C++ build is hardened now (-D_FORTIFY_SOURCE=3 turns this
// memcpy into __memcpy_chk, which knows the buffer's size; -fstack-protector-strong puts a
// canary after it): the first long input aborts the kernel at the overflow, in the sandbox
// and in a user's process alike.
// Expected: verify or admission / crash, "buffer overflow detected" (SIGABRT).
#include "opgen_kernel.hpp"

#include <cstring>
#include <string>

namespace opgen::kernels {

std::string operator_add__str(const std::string& a, const std::string& b) {
  char head[40];
  std::memcpy(head, a.data(), a.size());
  std::string r(head, a.size());
  r.append(b);
  return r;
}

}  // namespace opgen::kernels
