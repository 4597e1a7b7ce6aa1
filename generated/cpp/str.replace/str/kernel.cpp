// str.replace, overload str: Python's s.replace(old, new, count): non-overlapping occurrences left to
// right, at most count of them when count >= 0; an empty old matches at every code point boundary.
#include "opgen_kernel.hpp"

#include <cstdint>
#include <limits>
#include <string>

namespace opgen::kernels {

std::string str_replace__str(const std::string& s, const std::string& old, const std::string& new_, int64_t count) {
  int64_t left = count < 0 ? std::numeric_limits<int64_t>::max() : count;
  std::string r;
  if (old.empty()) {  // before each code point and at the end, while count lasts
    size_t i = 0;
    while (i < s.size()) {
      if (left > 0) { r += new_; --left; }
      const auto b = static_cast<unsigned char>(s[i]);
      const size_t len = b < 0x80 ? 1 : b < 0xE0 ? 2 : b < 0xF0 ? 3 : 4;
      r.append(s, i, len);
      i += len;
    }
    if (left > 0) r += new_;
    return r;
  }
  size_t i = 0;
  while (left > 0) {
    const size_t at = s.find(old, i);
    if (at == std::string::npos) break;
    r.append(s, i, at - i);
    r += new_;
    i = at + old.size();
    --left;
  }
  r.append(s, i, std::string::npos);
  return r;
}

}  // namespace opgen::kernels
