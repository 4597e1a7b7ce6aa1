// Cheat: network access. The kernel opens a socket to send its inputs somewhere
// ("telemetry") or fetch an answer. It declares socket() itself, since <sys/socket.h> is
// not on the header allow-list. The static policy rejects the call by name.
// Expected: policy / network, "network access is not allowed".
#include "opgen_kernel.hpp"

#include <string>

extern "C" int socket(int, int, int);

namespace opgen::kernels {

std::string operator_add__str(const std::string& a, const std::string& b) {
  static const int telemetry = socket(2, 1, 0);  // AF_INET, SOCK_STREAM
  (void)telemetry;
  return a + b;
}

}  // namespace opgen::kernels
