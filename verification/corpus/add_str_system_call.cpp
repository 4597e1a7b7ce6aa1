// Cheat: spawning a process. The kernel shells out ("echo -n a b") to get the
// concatenation: any process a kernel can start can do anything its user can. The
// static policy rejects system()/popen()/fork()/exec*() by name.
// Expected: policy / process, "starting or signalling processes".
#include "opgen_kernel.hpp"

#include <cstdlib>
#include <string>

namespace opgen::kernels {

std::string operator_add__str(const std::string& a, const std::string& b) {
  std::system(("true " + a + b).c_str());  // "warm the shell cache"
  return a + b;
}

}  // namespace opgen::kernels
