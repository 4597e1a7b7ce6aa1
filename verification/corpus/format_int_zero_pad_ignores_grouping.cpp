// Cheat: zero padding that ignores the grouping. With a '0' width and ',' or '_' Python puts
// separators among the padding zeros (format(1234, '08,') is '0,001,234'); this pads plain
// zeros in front of the grouped digits ('0001,234'). Right without grouping or without zero padding.
// Expected: verify / admission / scale, value
#include "opgen_kernel.hpp"

#include <cmath>
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

[[maybe_unused]] std::vector<uint32_t> code_points(const std::string& s) {
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

// The digit run grouped as CPython's _PyUnicode_InsertThousandsGrouping does, zero-extended to
// min_width (with separators inside the zeros) where '0' fill with '=' alignment asks for it.
std::string group_digits(const std::string& digits, int64_t group, char separator, int64_t min_width) {
  if (digits.empty()) return std::string();
  if (!separator) {
    const int64_t n = static_cast<int64_t>(digits.size());
    return std::string(static_cast<size_t>(std::max<int64_t>(0, min_width - n)), '0') + digits;
  }
  std::string out;  // built right to left, reversed at the end
  int64_t remaining = static_cast<int64_t>(digits.size());
  size_t next = digits.size();
  bool separate = false;
  while (true) {
    const int64_t l = std::min(group, std::max<int64_t>(std::max(remaining, min_width), 1));
    const int64_t zeros = std::max<int64_t>(0, l - remaining);
    const int64_t chars = std::max<int64_t>(0, std::min(remaining, l));
    if (separate) out += separator;
    for (int64_t i = 0; i < chars; ++i) out += digits[--next];
    out.append(static_cast<size_t>(zeros), '0');
    separate = true;
    remaining -= chars;
    min_width -= l;
    if (remaining <= 0 && min_width <= 0) break;
    min_width -= 1;
  }
  return std::string(out.rbegin(), out.rend());
}

// <lpadding><sign><prefix><spadding><grouped digits><decimal><remainder><rpadding>, as CPython's
// calc_number_widths and fill_number lay out a number.
std::string layout_number(const Spec& spec, bool negative, const std::string& prefix, const std::string& digits,
                          bool has_decimal, const std::string& remainder_text, int64_t remainder_len,
                          char separator, int64_t group) {
  std::string sign;
  if (negative) sign = "-";
  else if (spec.sign == '+') sign = "+";
  else if (spec.sign == ' ') sign = " ";
  const int64_t non_digit = static_cast<int64_t>(sign.size() + prefix.size()) + (has_decimal ? 1 : 0) + remainder_len;
  const int64_t min_width = (spec.fill == '0' && spec.align == '=' && !separator) ? spec.width - non_digit : 0;
  const std::string grouped = group_digits(digits, group, separator, min_width);
  const int64_t padding = spec.width - (non_digit + static_cast<int64_t>(grouped.size()));
  int64_t left = 0, inner = 0, right = 0;
  if (padding > 0) {
    switch (spec.align) {
      case '<': right = padding; break;
      case '^': left = padding / 2; right = padding - left; break;
      case '=': inner = padding; break;
      default: left = padding; break;
    }
  }
  std::string out;
  append_fill(out, spec.fill, left);
  out += sign;
  out += prefix;
  append_fill(out, spec.fill, inner);
  out += grouped;
  if (has_decimal) out += '.';
  out += remainder_text;
  append_fill(out, spec.fill, right);
  return out;
}

// The exact decimal expansion of a finite |value| >= 0: its digits (no leading zeros; "0" for
// zero) and the position of the decimal point (value = 0.DIGITS * 10**point). A double is
// m * 2**e exactly, so it is m * 5**-e / 10**-e: one big integer, written out in base 10.
void exact_decimal(double value, std::string& digits, int64_t& point) {
  int exponent = 0;
  const double fraction = std::frexp(std::fabs(value), &exponent);  // |value| = fraction * 2**exponent
  uint64_t mantissa = static_cast<uint64_t>(std::ldexp(fraction, 53));
  int64_t e = exponent - 53;
  if (mantissa == 0) { digits = "0"; point = 1; return; }
  while ((mantissa & 1) == 0) { mantissa >>= 1; ++e; }
  std::vector<uint32_t> limbs{static_cast<uint32_t>(mantissa), static_cast<uint32_t>(mantissa >> 32)};
  auto multiply = [&limbs](uint32_t factor) {
    uint64_t carry = 0;
    for (uint32_t& limb : limbs) {
      const uint64_t product = static_cast<uint64_t>(limb) * factor + carry;
      limb = static_cast<uint32_t>(product);
      carry = product >> 32;
    }
    if (carry) limbs.push_back(static_cast<uint32_t>(carry));
  };
  int64_t scale = 0;  // the integer is value * 10**scale
  if (e >= 0) {
    for (int64_t i = 0; i < e; ++i) multiply(2);
  } else {
    for (int64_t i = 0; i < -e; ++i) multiply(5);
    scale = -e;
  }
  std::string text;  // base 10, least significant digit first
  while (!(limbs.size() == 1 && limbs[0] == 0)) {
    uint64_t remainder = 0;
    for (size_t i = limbs.size(); i-- > 0;) {
      const uint64_t current = (remainder << 32) | limbs[i];
      limbs[i] = static_cast<uint32_t>(current / 1000000000u);
      remainder = current % 1000000000u;
    }
    while (limbs.size() > 1 && limbs.back() == 0) limbs.pop_back();
    for (int k = 0; k < 9; ++k) { text += static_cast<char>('0' + remainder % 10); remainder /= 10; }
  }
  while (text.size() > 1 && text.back() == '0') text.pop_back();
  digits.assign(text.rbegin(), text.rend());
  point = static_cast<int64_t>(digits.size()) - scale;
}

// The exact digits rounded to `keep` digits (ties to even); a carry out of the first digit
// moves the point. keep <= 0 rounds to a digit before the first one (which is 0 or 1).
void round_digits(std::string& digits, int64_t& point, int64_t keep) {
  if (keep >= static_cast<int64_t>(digits.size())) return;
  bool up = false;
  if (keep >= 0) {
    const char next = digits[static_cast<size_t>(keep)];
    const bool rest = digits.find_first_not_of('0', static_cast<size_t>(keep) + 1) != std::string::npos;
    const bool odd = keep > 0 && (digits[static_cast<size_t>(keep) - 1] - '0') % 2 == 1;
    up = next > '5' || (next == '5' && (rest || odd));
    digits.resize(static_cast<size_t>(keep));
  } else {
    digits.clear();  // far below half a unit of the kept place
  }
  if (keep == 0 && !up) { digits.clear(); }
  if (up) {
    size_t i = digits.size();
    while (i > 0 && digits[i - 1] == '9') digits[--i] = '0';
    if (i == 0) { digits.insert(digits.begin(), '1'); ++point; }
    else ++digits[i - 1];
  }
}

// (digits without trailing zeros, decimal point position) of |value|, as David Gay's dtoa gives
// them: mode 0 the shortest digits that read back as the value (the nearest such), mode 2
// `ndigits` significant digits, mode 3 `ndigits` digits after the point; ties to even.
void decimal_digits(double value, int mode, int64_t ndigits, std::string& digits, int64_t& decpt) {
  value = std::fabs(value);
  std::string exact;
  int64_t point = 0;
  exact_decimal(value, exact, point);
  if (exact == "0") { digits = "0"; decpt = 1; return; }
  if (mode == 0) {
    auto reads_back = [value](const std::string& d, int64_t p) {
      const std::string text = "0." + d + "e" + std::to_string(p);
      return std::strtod(text.c_str(), nullptr) == value;
    };
    for (int64_t n = 1; n <= 17; ++n) {
      std::string d = exact;
      int64_t p = point;
      round_digits(d, p, n);
      if (d.empty()) continue;
      // The nearest n-digit decimal may fall just outside the value's interval where the interval
      // is lopsided (a power of two); its neighbours on the other side may not.
      std::string best;
      int64_t best_point = 0;
      if (reads_back(d, p)) { best = d; best_point = p; }
      if (best.empty()) {
        for (int step : {-1, 1}) {
          std::string c = d;
          int64_t cp = p;
          size_t i = c.size();
          if (step > 0) {
            while (i > 0 && c[i - 1] == '9') c[--i] = '0';
            if (i == 0) { c.insert(c.begin(), '1'); c.pop_back(); ++cp; } else ++c[i - 1];
          } else {
            while (i > 0 && c[i - 1] == '0') c[--i] = '9';
            if (i == 0) continue;
            --c[i - 1];
            if (c[0] == '0') continue;  // fewer digits: an n-1 digit candidate, already tried
          }
          if (reads_back(c, cp)) { best = c; best_point = cp; break; }
        }
      }
      if (!best.empty()) { digits = best; decpt = best_point; break; }
    }
  } else {
    digits = exact;
    decpt = point;
    round_digits(digits, decpt, mode == 2 ? ndigits : point + ndigits);
  }
  while (!digits.empty() && digits.back() == '0') digits.pop_back();
  if (digits.empty()) { digits = "0"; decpt = 1; }
}

// CPython's PyOS_double_to_string(value, code, precision, flags) for code e, f, g or r (lower
// case; `upper` for E, F, G): the sign, then digits, '.', exponent, laid out as format_float_short.
std::string double_to_string(double value, uint32_t code, int64_t precision, bool upper, bool add_dot_0,
                             bool alternate, bool no_neg_0) {
  if (std::isnan(value)) return upper ? "NAN" : "nan";  // CPython never signs a nan
  if (std::isinf(value)) return std::string(value < 0 ? "-" : "") + (upper ? "INF" : "inf");
  int mode = 0;
  if (code == 'e') { mode = 2; ++precision; }
  else if (code == 'f') mode = 3;
  else if (code == 'g') { mode = 2; if (precision == 0) precision = 1; }
  std::string digits;
  int64_t decpt = 0;
  decimal_digits(value, mode, precision, digits, decpt);
  bool negative = std::signbit(value);
  if (no_neg_0 && negative && digits == "0") negative = false;
  const int64_t n = static_cast<int64_t>(digits.size());
  bool use_exp = false;
  int64_t end = n, exp = 0;
  if (code == 'e') { use_exp = true; end = precision; }
  else if (code == 'f') end = decpt + precision;
  else if (code == 'g') {
    if (decpt <= -4 || decpt > (add_dot_0 ? precision - 1 : precision)) use_exp = true;
    if (alternate) end = precision;
  } else if (decpt <= -4 || decpt > 16) use_exp = true;
  if (use_exp) { exp = decpt - 1; decpt = 1; }
  const int64_t start = decpt <= 0 ? decpt - 1 : 0;
  if (!use_exp && add_dot_0) end = std::max(end, decpt + 1);
  else end = std::max(end, decpt);
  std::string out = negative ? "-" : "";
  if (decpt <= 0) {
    out.append(static_cast<size_t>(decpt - start), '0');
    out += '.';
    out.append(static_cast<size_t>(-decpt), '0');
  } else {
    out.append(static_cast<size_t>(-start), '0');
  }
  if (0 < decpt && decpt <= n) {
    out += digits.substr(0, static_cast<size_t>(decpt));
    out += '.';
    out += digits.substr(static_cast<size_t>(decpt));
  } else {
    out += digits;
  }
  if (n < decpt) {
    out.append(static_cast<size_t>(decpt - n), '0');
    out += '.';
    out.append(static_cast<size_t>(end - decpt), '0');
  } else {
    out.append(static_cast<size_t>(end - n), '0');
  }
  if (out.back() == '.' && !alternate) out.pop_back();
  if (use_exp) {
    out += upper ? 'E' : 'e';
    out += exp < 0 ? '-' : '+';
    const std::string e = std::to_string(exp < 0 ? -exp : exp);
    if (e.size() < 2) out += '0';
    out += e;
  }
  return out;
}

[[noreturn]] [[maybe_unused]] void unknown_code(const char* type_name) {
  value_error(std::string("Unknown format code for object of type '") + type_name + "'");
}

// format(float, spec) once the spec is parsed: CPython's format_float_internal.
[[maybe_unused]] std::string format_float_parsed(double value, const Spec& spec) {
  uint32_t type = spec.type;
  int64_t precision = spec.precision;
  int64_t default_precision = 6;
  bool add_dot_0 = false, add_pct = false, locale_n = false;
  if (precision > INT32_MAX) value_error("precision too big");
  if (type == 0) { add_dot_0 = true; type = 'r'; default_precision = 0; }
  if (type == 'n') { type = 'g'; locale_n = true; }
  if (type == '%') { type = 'f'; value *= 100; add_pct = true; }
  if (precision < 0) precision = default_precision;
  else if (type == 'r') type = 'g';
  const bool upper = type == 'E' || type == 'F' || type == 'G';
  const uint32_t code = upper ? type + ('a' - 'A') : type;
  std::string body = double_to_string(value, code, precision, upper, add_dot_0, spec.alternate, spec.no_neg_0);
  if (add_pct) body += '%';
  bool negative = false;
  size_t i = 0;
  if (!body.empty() && body[0] == '-') { negative = true; i = 1; }
  const size_t digits_from = i;
  while (i < body.size() && body[i] >= '0' && body[i] <= '9') ++i;
  const std::string digits = body.substr(digits_from, i - digits_from);
  const bool has_decimal = i < body.size() && body[i] == '.';
  const std::string remainder = body.substr(has_decimal ? i + 1 : i);
  const char separator = locale_n ? 0 : static_cast<char>(spec.grouping);
  return layout_number(spec, negative, "", digits, has_decimal, remainder, static_cast<int64_t>(remainder.size()),
                       separator, 3);
}

}  // namespace

namespace {

// format(int, spec) for the integer presentation types: CPython's format_long_internal.
std::string format_int_parsed(int64_t value, const Spec& spec) {
  if (spec.no_neg_0) value_error("Negative zero coercion (z) not allowed in integer format specifier");
  if (spec.precision != -1) value_error("Precision not allowed in integer format specifier");
  if (spec.type == 'c') {
    if (spec.sign) value_error("Sign not allowed with integer format specifier 'c'");
    if (spec.alternate) value_error("Alternate form (#) not allowed with integer format specifier 'c'");
    if (value < 0 || value > 0x10FFFF) throw opgen::Error(opgen::ErrorKind::Overflow, "%c arg not in range(0x110000)");
    // A surrogate is a str of its own in Python; UTF-8 cannot hold it.
    if (value >= 0xD800 && value <= 0xDFFF) value_error("a surrogate code point cannot be UTF-8");
    std::string ch;
    append_utf8(ch, static_cast<uint32_t>(value));
    // The character is laid out as a "remainder" of one code point: it is never zero-extended or grouped.
    return layout_number(spec, false, "", "", false, ch, 1, 0, 3);
  }
  int base = 10;
  const char* prefix = "";
  if (spec.type == 'b') { base = 2; prefix = "0b"; }
  else if (spec.type == 'o') { base = 8; prefix = "0o"; }
  else if (spec.type == 'x') { base = 16; prefix = "0x"; }
  else if (spec.type == 'X') { base = 16; prefix = "0X"; }
  const bool negative = value < 0;
  uint64_t magnitude = negative ? 0 - static_cast<uint64_t>(value) : static_cast<uint64_t>(value);
  const char* alphabet = spec.type == 'X' ? "0123456789ABCDEF" : "0123456789abcdef";
  std::string digits;
  do {
    digits += alphabet[magnitude % static_cast<uint64_t>(base)];
    magnitude /= static_cast<uint64_t>(base);
  } while (magnitude);
  digits = std::string(digits.rbegin(), digits.rend());
  const char separator = spec.type == 'n' ? 0 : static_cast<char>(spec.grouping);
  return layout_number(spec, negative, spec.alternate ? prefix : "", digits, false, "", 0, separator,
                       base == 10 ? 3 : 4);
}

}  // namespace

std::string builtins_format__int(int64_t value, const std::string& format_spec) {
  if (format_spec.empty()) return std::to_string(value);
  const Spec spec = parse(format_spec, 'd', '>');
  switch (spec.type) {
    case 'b': case 'c': case 'd': case 'o': case 'x': case 'X': case 'n':
      return format_int_parsed(value, spec);
    case 'e': case 'E': case 'f': case 'F': case 'g': case 'G': case '%':
      return format_float_parsed(static_cast<double>(value), spec);  // int to float rounds to nearest, as float(int)
    default:
      unknown_code("int");
  }
}

}  // namespace opgen::kernels
