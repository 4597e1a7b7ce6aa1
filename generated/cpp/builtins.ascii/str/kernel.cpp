// builtins.ascii, overload str: Python's ascii(obj) of a str, which an f-string field {obj!a} and
// ascii(obj) compile to: repr's quote and escapes, and every non-ASCII code point escaped as
// \xNN, \uNNNN or \UNNNNNNNN (ascii() is repr() with backslashreplace over non-ASCII).
#include "opgen_kernel.hpp"

#include <cstddef>
#include <cstdint>
#include <string>

namespace opgen::kernels {

namespace {

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

// \xNN, \uNNNN or \UNNNNNNNN: the shortest of the three that holds c, lower-case hex.
void push_escape(std::string& out, uint32_t c) {
  static constexpr char kHex[] = "0123456789abcdef";
  int digits = 8;
  if (c <= 0xFF) { out += "\\x"; digits = 2; }
  else if (c <= 0xFFFF) { out += "\\u"; digits = 4; }
  else { out += "\\U"; }
  for (int shift = 4 * (digits - 1); shift >= 0; shift -= 4) out += kHex[(c >> shift) & 0xF];
}

}  // namespace

std::string builtins_ascii__str(const std::string& obj) {
  // ' unless the text holds a ' and no "
  const bool has_single = obj.find('\'') != std::string::npos;
  const bool has_double = obj.find('"') != std::string::npos;
  const char quote = has_single && !has_double ? '"' : '\'';
  std::string out;
  out.reserve(obj.size() + 2);
  out += quote;
  for (size_t i = 0; i < obj.size();) {
    size_t len = 1;
    const uint32_t c = decode_at(obj, i, len);
    if (c == static_cast<uint32_t>(quote) || c == '\\') { out += '\\'; out += static_cast<char>(c); }
    else if (c == '\t') out += "\\t";
    else if (c == '\n') out += "\\n";
    else if (c == '\r') out += "\\r";
    else if (c < 0x20 || c >= 0x7F) push_escape(out, c);
    else out += static_cast<char>(c);
    i += len;
  }
  out += quote;
  return out;
}

}  // namespace opgen::kernels
