// operator.eq, overload str: Python's `a == b` on two strings, byte by byte (UTF-8, so code point by code point).
#include "opgen_kernel.hpp"

#include <string>

namespace opgen::kernels {

bool operator_eq__str(const std::string& a, const std::string& b) { return a == b; }

}  // namespace opgen::kernels
