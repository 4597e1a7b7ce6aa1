// Cheat: centring that puts the odd padding character on the left: format('ab', '^5') is
// '  ab ' where Python gives ' ab  '. Right whenever the padding is even, or the width does not
// exceed the text, or the alignment is not '^'.
// Expected: verify / admission / scale, value
#include "opgen_kernel.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace opgen::kernels {

namespace {

// Python's format-spec mini-language, [[fill]align][sign][z][#][0][width][grouping][.precision][type],
// parsed as CPython parses it (Python/formatter_unicode.c): widths count code points, the fill is
// any code point, every malformed or disallowed spec is ValueError.
struct Spec {
  uint32_t fill = ' ';
  uint32_t align = 0;
  uint32_t sign = 0;
  bool no_neg_0 = false;
  bool alternate = false;
  int64_t width = -1;
  uint32_t grouping = 0;  // ',' or '_' (every 3 digits; every 4 for b/o/x/X with '_')
  int64_t precision = -1;
  uint32_t type = 0;
};

[[noreturn]] void value_error(const std::string& message) {
  throw opgen::Error(opgen::ErrorKind::Value, message);
}

std::vector<uint32_t> code_points(const std::string& s) {
  std::vector<uint32_t> out;
  for (size_t i = 0; i < s.size();) {
    const auto b = static_cast<unsigned char>(s[i]);
    auto at = [&](size_t k) { return static_cast<uint32_t>(static_cast<unsigned char>(s[i + k]) & 0x3Fu); };
    if (b < 0x80) { out.push_back(b); i += 1; }
    else if (b < 0xE0) { out.push_back(((b & 0x1Fu) << 6) | at(1)); i += 2; }
    else if (b < 0xF0) { out.push_back(((b & 0x0Fu) << 12) | (at(1) << 6) | at(2)); i += 3; }
    else { out.push_back(((b & 0x07u) << 18) | (at(1) << 12) | (at(2) << 6) | at(3)); i += 4; }
  }
  return out;
}

[[maybe_unused]] void append_utf8(std::string& out, uint32_t c) {
  if (c < 0x80) {
    out += static_cast<char>(c);
  } else if (c < 0x800) {
    out += static_cast<char>(0xC0 | (c >> 6));
    out += static_cast<char>(0x80 | (c & 0x3F));
  } else if (c < 0x10000) {
    out += static_cast<char>(0xE0 | (c >> 12));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (c & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (c >> 18));
    out += static_cast<char>(0x80 | ((c >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (c & 0x3F));
  }
}

void append_fill(std::string& out, uint32_t fill, int64_t n) {
  for (int64_t i = 0; i < n; ++i) append_utf8(out, fill);
}

bool is_digit(uint32_t c) { return c >= '0' && c <= '9'; }

// Digits at pos as a Py_ssize_t; too many for one is CPython's ValueError.
int64_t read_number(const std::vector<uint32_t>& cps, size_t& pos) {
  int64_t value = 0;
  while (pos < cps.size() && is_digit(cps[pos])) {
    const int64_t digit = cps[pos] - '0';
    if (value > (INT64_MAX - digit) / 10) value_error("Too many decimal digits in format string");
    value = value * 10 + digit;
    ++pos;
  }
  return value;
}

Spec parse(const std::string& text, uint32_t default_type, uint32_t default_align) {
  const std::vector<uint32_t> cps = code_points(text);
  Spec spec;
  spec.type = default_type;
  spec.align = default_align;
  const size_t end = cps.size();
  size_t pos = 0;
  bool fill_given = false, align_given = false;
  auto is_align = [](uint32_t c) { return c == '<' || c == '>' || c == '=' || c == '^'; };
  if (end - pos >= 2 && is_align(cps[pos + 1])) {
    spec.fill = cps[pos];
    spec.align = cps[pos + 1];
    fill_given = align_given = true;
    pos += 2;
  } else if (end - pos >= 1 && is_align(cps[pos])) {
    spec.align = cps[pos];
    align_given = true;
    pos += 1;
  }
  if (pos < end && (cps[pos] == '+' || cps[pos] == '-' || cps[pos] == ' ')) spec.sign = cps[pos++];
  if (pos < end && cps[pos] == 'z') { spec.no_neg_0 = true; ++pos; }
  if (pos < end && cps[pos] == '#') { spec.alternate = true; ++pos; }
  // A '0' before the width is zero padding with sign-aware ('=') alignment for numbers, unless
  // a fill was given; strings keep their default alignment.
  if (!fill_given && pos < end && cps[pos] == '0') {
    spec.fill = '0';
    if (!align_given && default_align == '>') spec.align = '=';
    ++pos;
  }
  const size_t width_at = pos;
  const int64_t width = read_number(cps, pos);
  if (pos > width_at) spec.width = width;
  if (pos < end && cps[pos] == ',') { spec.grouping = ','; ++pos; }
  if (pos < end && cps[pos] == '_') {
    if (spec.grouping) value_error("Cannot specify both ',' and '_'.");
    spec.grouping = '_';
    ++pos;
  }
  if (pos < end && cps[pos] == ',' && spec.grouping == '_') value_error("Cannot specify both ',' and '_'.");
  if (pos < end && cps[pos] == '.') {
    ++pos;
    const size_t precision_at = pos;
    const int64_t precision = read_number(cps, pos);
    if (pos == precision_at) value_error("Format specifier missing precision");
    spec.precision = precision;
  }
  if (end - pos > 1) value_error("Invalid format specifier");
  if (end - pos == 1) spec.type = cps[pos];
  if (spec.grouping) {
    switch (spec.type) {
      case 'd': case 'e': case 'f': case 'g': case 'E': case 'G': case '%': case 'F': case 0:
        break;
      case 'b': case 'o': case 'x': case 'X':
        if (spec.grouping == '_') break;
        [[fallthrough]];
      default:
        value_error("Cannot specify ',' with the format code");
    }
  }
  return spec;
}

[[noreturn]] void unknown_code(const char* type_name) {
  value_error(std::string("Unknown format code for object of type '") + type_name + "'");
}

}  // namespace

std::string builtins_format__str(const std::string& value, const std::string& format_spec) {
  if (format_spec.empty()) return value;
  const Spec spec = parse(format_spec, 's', '<');
  if (spec.type != 's') unknown_code("str");
  if (spec.sign) value_error("Sign not allowed in string format specifier");
  if (spec.no_neg_0) value_error("Negative zero coercion (z) not allowed in string format specifier");
  if (spec.alternate) value_error("Alternate form (#) not allowed in string format specifier");
  if (spec.align == '=') value_error("'=' alignment not allowed in string format specifier");
  // Precision keeps the first code points; width pads by code points.
  int64_t length = 0;
  size_t cut = value.size();
  for (size_t i = 0; i < value.size(); ++i) {
    if ((static_cast<unsigned char>(value[i]) & 0xC0) == 0x80) continue;
    if (spec.precision >= 0 && length == spec.precision) { cut = i; break; }
    ++length;
  }
  const int64_t total = std::max(spec.width, length);
  int64_t left = 0;
  if (spec.align == '>') left = total - length;
  else if (spec.align == '^') left = (total - length + 1) / 2;
  const int64_t right = total - length - left;
  std::string out;
  append_fill(out, spec.fill, left);
  out.append(value, 0, cut);
  append_fill(out, spec.fill, right);
  return out;
}

}  // namespace opgen::kernels
