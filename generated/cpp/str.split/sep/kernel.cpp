// str.split, overload sep: Python's s.split(sep) and s.split(sep, maxsplit): the text between
// non-overlapping occurrences of sep, left to right (UTF-8 is self-synchronising, so a byte search
// of a whole separator only ever matches at code point boundaries).
#include "opgen_kernel.hpp"

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace opgen::kernels {

std::vector<std::string> str_split__sep(const std::string& s, const std::string& sep, int64_t maxsplit) {
  if (sep.empty()) throw opgen::Error(opgen::ErrorKind::Value, "empty separator");
  std::vector<std::string> out;
  int64_t left = maxsplit < 0 ? std::numeric_limits<int64_t>::max() : maxsplit;
  size_t i = 0;
  while (left-- > 0) {
    const size_t at = s.find(sep, i);
    if (at == std::string::npos) break;
    out.push_back(s.substr(i, at - i));
    i = at + sep.size();
  }
  out.push_back(s.substr(i));
  return out;
}

}  // namespace opgen::kernels
