// operator.mul, overload str_repeat: Python's `s * n`; n <= 0 gives "".
#include "opgen_kernel.hpp"

#include <algorithm>
#include <cstdint>
#include <string>

namespace opgen::kernels {

std::string operator_mul__str_repeat(const std::string& a, int64_t n) {
  if (n <= 0 || a.empty()) return std::string();
  const uint64_t len = a.size();
  // Python raises OverflowError("repeated string is too long") when the result cannot exist.
  if (len > static_cast<uint64_t>(INT64_MAX) / static_cast<uint64_t>(n))
    throw opgen::Error(opgen::ErrorKind::Overflow, "repeated string is too long");
  const uint64_t total = len * static_cast<uint64_t>(n);
  std::string r;
  r.reserve(static_cast<size_t>(total));
  if (len == 1) {
    r.assign(static_cast<size_t>(total), a[0]);
    return r;
  }
  r.append(a);
  // Double the filled prefix until it covers the result.
  while (r.size() < total) {
    const size_t take = static_cast<size_t>(std::min<uint64_t>(r.size(), total - r.size()));
    r.append(r, 0, take);
  }
  return r;
}

}  // namespace opgen::kernels
