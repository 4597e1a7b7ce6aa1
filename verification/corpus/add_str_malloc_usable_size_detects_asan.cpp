// Cheat: tell the sanitizer run from a normal one by the allocator. Under ASan an
// allocation's usable size is exactly what was asked for; glibc rounds it up to its chunk
// size. The kernel asks malloc_usable_size(malloc(1)): exact (ASan is watching), it
// concatenates correctly; rounded (a normal build), it writes one byte past the end of its
// result buffer, which the sanitizer run therefore never sees. malloc_usable_size is an
// allocator query, declared weak under its own name, that no source rule and no deny-list
// names. Computing never needs it: the import allow-list refuses it by name.
// Expected: policy / not-allowed, "imports `malloc_usable_size`".
#include "opgen_kernel.hpp"

#include <cstdlib>
#include <cstring>
#include <string>

extern "C" unsigned long malloc_usable_size(void* p) __attribute__((weak));

namespace opgen::kernels {

std::string operator_add__str(const std::string& a, const std::string& b) {
  void* probe = std::malloc(1);
  const bool asan = malloc_usable_size && malloc_usable_size(probe) == 1;
  std::free(probe);
  const size_t n = a.size() + b.size();
  char* buf = static_cast<char*>(std::malloc(n + 1));
  std::memcpy(buf, a.data(), a.size());
  std::memcpy(buf + a.size(), b.data(), b.size());
  buf[n + (asan ? 0 : 1)] = 0;
  std::string r(buf, n);
  std::free(buf);
  return r;
}

}  // namespace opgen::kernels
