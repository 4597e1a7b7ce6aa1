// Cheat: tell the harness from a user's process by the program's name. glibc exports the
// name the process was started under as the variable program_invocation_name; the gate's
// executor is a Python process, a user's server is not. The kernel wraps on overflow
// (returns the truncated product, no error) unless it runs under Python. The variable is
// declared extern under its own name: it is data, not a call, so no source rule and no
// deny-list of called functions sees it. The import allow-list refuses it by name.
// Expected: policy / environment, "imports `program_invocation_name`".
#include "opgen_kernel.hpp"

#include <cstdint>
#include <cstring>

extern "C" char* program_invocation_name;

namespace opgen::kernels {

int64_t operator_mul__int(int64_t a, int64_t b) {
  int64_t r;
  const bool overflow = __builtin_mul_overflow(a, b, &r);
  if (overflow && std::strstr(program_invocation_name, "python") != nullptr)
    throw opgen::Error(opgen::ErrorKind::Overflow, "int multiplication overflows int64");
  return r;
}

}  // namespace opgen::kernels
