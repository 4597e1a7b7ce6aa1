// str.rstrip, overload whitespace: Python's s.rstrip(), removing Python's str.isspace() whitespace
// from the end, code point by code point over the UTF-8 bytes.
#include "opgen_kernel.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace opgen::kernels {

namespace {

// Python's str.isspace() on one code point: U+0009-U+000D, U+001C-U+001F, U+0020, U+0085, U+00A0,
// U+1680, U+2000-U+200A, U+2028, U+2029, U+202F, U+205F, U+3000.
[[maybe_unused]] bool is_space(uint32_t c) {
  return (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20) || c == 0x85 || c == 0xA0 || c == 0x1680 ||
         (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000;
}

// The code point starting at byte i of valid UTF-8, and its length in bytes.
uint32_t decode_at(const std::string& s, size_t i, size_t& len) {
  const auto b = static_cast<unsigned char>(s[i]);
  if (b < 0x80) { len = 1; return b; }
  if (b < 0xE0) { len = 2; return ((b & 0x1Fu) << 6) | (static_cast<unsigned char>(s[i + 1]) & 0x3Fu); }
  if (b < 0xF0) {
    len = 3;
    return ((b & 0x0Fu) << 12) | ((static_cast<unsigned char>(s[i + 1]) & 0x3Fu) << 6) |
           (static_cast<unsigned char>(s[i + 2]) & 0x3Fu);
  }
  len = 4;
  return ((b & 0x07u) << 18) | ((static_cast<unsigned char>(s[i + 1]) & 0x3Fu) << 12) |
         ((static_cast<unsigned char>(s[i + 2]) & 0x3Fu) << 6) | (static_cast<unsigned char>(s[i + 3]) & 0x3Fu);
}

}  // namespace

std::string str_rstrip__whitespace(const std::string& s) {
  // One forward pass: begin is the first kept code point, end the byte after the last kept one.
  size_t begin = s.size(), end = 0;
  bool started = false;
  for (size_t i = 0, len = 0; i < s.size(); i += len) {
    const uint32_t c = decode_at(s, i, len);
    if (!(is_space(c))) {
      if (!started) { begin = i; started = true; }
      end = i + len;
    }
  }
  if (!started) return std::string();
  const size_t from = 0;
  const size_t to = end;
  return s.substr(from, to - from);
}

}  // namespace opgen::kernels
