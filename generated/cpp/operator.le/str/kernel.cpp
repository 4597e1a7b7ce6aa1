// operator.le, overload str: Python's `a <= b` on two strings, lexicographic by code point.
// UTF-8 keeps code point order when its bytes are compared as unsigned, which is what
// std::string::compare does (char_traits<char> compares as unsigned char); a proper prefix
// comes first.
#include "opgen_kernel.hpp"

#include <string>

namespace opgen::kernels {

bool operator_le__str(const std::string& a, const std::string& b) { return a.compare(b) <= 0; }

}  // namespace opgen::kernels
