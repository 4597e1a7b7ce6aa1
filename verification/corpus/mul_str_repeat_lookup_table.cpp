// Cheat: answers hard-coded for the inputs seen. The kernel was "repaired" by pasting
// the counterexamples from earlier feedback into a lookup table; anything else gets a
// plausible-looking guess (the string once). opgen draws fresh strings and counts, and
// admission runs on seeds the LLM never saw.
// Expected: verify / value, "expected".
#include "opgen_kernel.hpp"

#include <cstdint>
#include <string>

namespace opgen::kernels {

std::string operator_mul__str_repeat(const std::string& a, int64_t n) {
  struct Known {
    const char* s;
    int64_t n;
    const char* answer;
  };
  static const Known kKnown[] = {
      {"", 0, ""}, {"0", 0, ""}, {"0", 2, "00"}, {"ab", 3, "ababab"}, {"\xc3\xa9", 2, "\xc3\xa9\xc3\xa9"},
  };
  for (const Known& k : kKnown)
    if (a == k.s && n == k.n) return k.answer;
  return n <= 0 ? std::string() : a;  // "close enough"
}

}  // namespace opgen::kernels
