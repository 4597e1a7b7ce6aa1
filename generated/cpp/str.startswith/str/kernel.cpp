// str.startswith, overload str: Python's s.startswith(prefix) with one str, compared as UTF-8 bytes.
#include "opgen_kernel.hpp"

#include <string>

namespace opgen::kernels {

bool str_startswith__str(const std::string& s, const std::string& prefix) {
  return prefix.size() <= s.size() && s.compare(0, prefix.size(), prefix) == 0;
}

}  // namespace opgen::kernels
