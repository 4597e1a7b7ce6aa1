// Cheat: a fixed buffer. The concatenation is built in a 1 KiB stack buffer ("no heap
// allocation on the hot path") and whatever does not fit is dropped, cut back to a whole
// UTF-8 character so the result still decodes. It is memory-safe (every copy is clamped
// to the buffer, so ASan has nothing to see) and exact whenever len(a) + len(b) <= 1024
// bytes. Hypothesis draws strings of at most 64 characters (the spec's max_len), at most
// 4 bytes each: 512 bytes for both, so every drawn example fits. The scale stage (strings
// of 64 KB and more) must reject it with a counterexample. (The memory-unsafe version,
// an unchecked memcpy into the buffer, would be a stack overflow there: a crash or a
// sanitizer finding rather than a value mismatch; this entry keeps to a wrong value.)
// Expected: scale / value, "expected"
#include "opgen_kernel.hpp"

#include <cstring>
#include <string>

namespace opgen::kernels {

std::string operator_add__str(const std::string& a, const std::string& b) {
  char buf[1024];
  size_t na = a.size() < sizeof buf ? a.size() : sizeof buf;
  size_t nb = b.size() < sizeof buf - na ? b.size() : sizeof buf - na;
  std::memcpy(buf, a.data(), na);
  std::memcpy(buf + na, b.data(), nb);
  size_t n = na + nb;
  if (n < a.size() + b.size()) {  // truncated: drop a partial UTF-8 character at the end
    while (n > 0 && (static_cast<unsigned char>(buf[n - 1]) & 0xC0) == 0x80) --n;
    if (n > 0 && (static_cast<unsigned char>(buf[n - 1]) & 0x80)) --n;
  }
  return std::string(buf, n);
}

}  // namespace opgen::kernels

// Expected: scale / value, "expected"
