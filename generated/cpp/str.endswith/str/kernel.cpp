// str.endswith, overload str: Python's s.endswith(suffix) with one str, compared as UTF-8 bytes.
#include "opgen_kernel.hpp"

#include <string>

namespace opgen::kernels {

bool str_endswith__str(const std::string& s, const std::string& suffix) {
  return suffix.size() <= s.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace opgen::kernels
