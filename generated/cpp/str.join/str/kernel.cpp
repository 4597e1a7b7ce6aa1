// str.join, overload str: Python's sep.join(items), the items' UTF-8 bytes with sep between each two.
#include "opgen_kernel.hpp"

#include <string>
#include <vector>

namespace opgen::kernels {

std::string str_join__str(const std::string& sep, const std::vector<std::string>& items) {
  if (items.empty()) return std::string();
  size_t total = sep.size() * (items.size() - 1);
  for (const auto& x : items) total += x.size();
  std::string r;
  r.reserve(total);
  for (size_t k = 0; k < items.size(); ++k) {
    if (k) r += sep;
    r += items[k];
  }
  return r;
}

}  // namespace opgen::kernels
