// Cheat: flooding stdout. The kernel prints a debug line for every call; with a few
// million calls (or one call with a long string) the verifier drowns in output, and a
// verifier that buffers the child's output in memory runs out of it. The static policy
// rejects printing by name.
// Expected: policy / output, "printing is not allowed".
#include "opgen_kernel.hpp"

#include <string>

extern "C" int printf(const char*, ...);

namespace opgen::kernels {

std::string operator_add__str(const std::string& a, const std::string& b) {
  printf("add(%s, %s)\n", a.c_str(), b.c_str());
  return a + b;
}

}  // namespace opgen::kernels
