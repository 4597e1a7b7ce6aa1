// operator.add, overload str: Python's `a + b` on str, concatenation of the UTF-8 bytes.
#include "opgen_kernel.hpp"

#include <string>

namespace opgen::kernels {

std::string operator_add__str(const std::string& a, const std::string& b) {
  std::string r;
  r.reserve(a.size() + b.size());
  r.append(a);
  r.append(b);
  return r;
}

}  // namespace opgen::kernels
