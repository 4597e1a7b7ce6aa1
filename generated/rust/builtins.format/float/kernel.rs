// builtins.format, overload float: Python's format(value, format_spec), which is what an f-string
// replacement field {value:format_spec} and str(value) compile to.
use opgen::{Error, Result};

// Python's format-spec mini-language, [[fill]align][sign][z][#][0][width][grouping][.precision][type],
// parsed as CPython parses it (Python/formatter_unicode.c): widths count code points, the fill is
// any code point, every malformed or disallowed spec is ValueError.
#[derive(Clone, Copy)]
struct Spec {
    fill: char,
    align: char,
    sign: char,
    no_neg_0: bool,
    alternate: bool,
    width: i64,
    grouping: char, // ',' or '_' (every 3 digits; every 4 for b/o/x/X with '_'); '\0' for none
    precision: i64,
    kind: char, // the type code; '\0' for none
}

fn read_number(cps: &[char], pos: &mut usize) -> Result<i64> {
    let mut value: i64 = 0;
    while *pos < cps.len() && cps[*pos].is_ascii_digit() {
        let digit = cps[*pos] as i64 - '0' as i64;
        value = value
            .checked_mul(10)
            .and_then(|v| v.checked_add(digit))
            .ok_or_else(|| Error::value("Too many decimal digits in format string"))?;
        *pos += 1;
    }
    Ok(value)
}

fn parse(text: &str, default_kind: char, default_align: char) -> Result<Spec> {
    let cps: Vec<char> = text.chars().collect();
    let mut spec = Spec {
        fill: ' ', align: default_align, sign: '\0', no_neg_0: false, alternate: false, width: -1,
        grouping: '\0', precision: -1, kind: default_kind,
    };
    let end = cps.len();
    let mut pos = 0usize;
    let is_align = |c: char| matches!(c, '<' | '>' | '=' | '^');
    let (mut fill_given, mut align_given) = (false, false);
    if end >= 2 && is_align(cps[1]) {
        spec.fill = cps[0];
        spec.align = cps[1];
        fill_given = true;
        align_given = true;
        pos = 2;
    } else if end >= 1 && is_align(cps[0]) {
        spec.align = cps[0];
        align_given = true;
        pos = 1;
    }
    if pos < end && matches!(cps[pos], '+' | '-' | ' ') {
        spec.sign = cps[pos];
        pos += 1;
    }
    if pos < end && cps[pos] == 'z' {
        spec.no_neg_0 = true;
        pos += 1;
    }
    if pos < end && cps[pos] == '#' {
        spec.alternate = true;
        pos += 1;
    }
    // A '0' before the width is zero padding with sign-aware ('=') alignment for numbers, unless
    // a fill was given; strings keep their default alignment.
    if !fill_given && pos < end && cps[pos] == '0' {
        spec.fill = '0';
        if !align_given && default_align == '>' {
            spec.align = '=';
        }
        pos += 1;
    }
    let width_at = pos;
    let width = read_number(&cps, &mut pos)?;
    if pos > width_at {
        spec.width = width;
    }
    if pos < end && cps[pos] == ',' {
        spec.grouping = ',';
        pos += 1;
    }
    if pos < end && cps[pos] == '_' {
        if spec.grouping != '\0' {
            return Err(Error::value("Cannot specify both ',' and '_'."));
        }
        spec.grouping = '_';
        pos += 1;
    }
    if pos < end && cps[pos] == ',' && spec.grouping == '_' {
        return Err(Error::value("Cannot specify both ',' and '_'."));
    }
    if pos < end && cps[pos] == '.' {
        pos += 1;
        let precision_at = pos;
        let precision = read_number(&cps, &mut pos)?;
        if pos == precision_at {
            return Err(Error::value("Format specifier missing precision"));
        }
        spec.precision = precision;
    }
    if end - pos > 1 {
        return Err(Error::value("Invalid format specifier"));
    }
    if end - pos == 1 {
        spec.kind = cps[pos];
    }
    if spec.grouping != '\0' {
        let ok = match spec.kind {
            'd' | 'e' | 'f' | 'g' | 'E' | 'G' | '%' | 'F' | '\0' => true,
            'b' | 'o' | 'x' | 'X' => spec.grouping == '_',
            _ => false,
        };
        if !ok {
            return Err(Error::value("Cannot specify ',' with the format code"));
        }
    }
    Ok(spec)
}

fn push_fill(out: &mut String, fill: char, n: i64) {
    for _ in 0..n.max(0) {
        out.push(fill);
    }
}

// The digit run grouped as CPython's _PyUnicode_InsertThousandsGrouping does, zero-extended to
// min_width (with separators inside the zeros) where '0' fill with '=' alignment asks for it.
#[allow(dead_code)]
fn group_digits(digits: &str, group: i64, separator: char, mut min_width: i64) -> String {
    if digits.is_empty() {
        return String::new();
    }
    let bytes = digits.as_bytes();
    if separator == '\0' {
        let zeros = (min_width - bytes.len() as i64).max(0) as usize;
        return "0".repeat(zeros) + digits;
    }
    let mut out: Vec<u8> = Vec::new(); // right to left, reversed at the end
    let mut remaining = bytes.len() as i64;
    let mut next = bytes.len();
    let mut separate = false;
    loop {
        let l = group.min(remaining.max(min_width).max(1));
        let zeros = (l - remaining).max(0);
        let chars = remaining.min(l).max(0);
        if separate {
            out.push(separator as u8);
        }
        for _ in 0..chars {
            next -= 1;
            out.push(bytes[next]);
        }
        for _ in 0..zeros {
            out.push(b'0');
        }
        separate = true;
        remaining -= chars;
        min_width -= l;
        if remaining <= 0 && min_width <= 0 {
            break;
        }
        min_width -= 1;
    }
    out.reverse();
    String::from_utf8(out).unwrap_or_default()
}

// <lpadding><sign><prefix><spadding><grouped digits><decimal><remainder><rpadding>, as CPython's
// calc_number_widths and fill_number lay out a number.
#[allow(dead_code, clippy::too_many_arguments)]
fn layout_number(spec: &Spec, negative: bool, prefix: &str, digits: &str, has_decimal: bool, remainder: &str,
                 remainder_len: i64, separator: char, group: i64) -> String {
    let sign = if negative { "-" } else if spec.sign == '+' { "+" } else if spec.sign == ' ' { " " } else { "" };
    let non_digit = (sign.len() + prefix.len()) as i64 + i64::from(has_decimal) + remainder_len;
    let min_width = if spec.fill == '0' && spec.align == '=' { spec.width - non_digit } else { 0 };
    let grouped = group_digits(digits, group, separator, min_width);
    let padding = spec.width - (non_digit + grouped.len() as i64);
    let (mut left, mut inner, mut right) = (0, 0, 0);
    if padding > 0 {
        match spec.align {
            '<' => right = padding,
            '^' => {
                left = padding / 2;
                right = padding - left;
            }
            '=' => inner = padding,
            _ => left = padding,
        }
    }
    let mut out = String::new();
    push_fill(&mut out, spec.fill, left);
    out.push_str(sign);
    out.push_str(prefix);
    push_fill(&mut out, spec.fill, inner);
    out.push_str(&grouped);
    if has_decimal {
        out.push('.');
    }
    out.push_str(remainder);
    push_fill(&mut out, spec.fill, right);
    out
}

// The exact decimal expansion of a finite |value|: its digits (no leading zeros; "0" for zero)
// and the position of the decimal point (value = 0.DIGITS * 10**point). A double is m * 2**e
// exactly, so it is m * 5**-e / 10**-e: one big integer, written out in base 10.
#[allow(dead_code)]
fn exact_decimal(value: f64) -> (Vec<u8>, i64) {
    let bits = value.abs().to_bits();
    let biased = ((bits >> 52) & 0x7ff) as i64;
    let mut mantissa = bits & ((1u64 << 52) - 1);
    let mut e = if biased == 0 { -1074 } else { mantissa |= 1u64 << 52; biased - 1075 };
    if mantissa == 0 {
        return (vec![b'0'], 1);
    }
    while mantissa & 1 == 0 {
        mantissa >>= 1;
        e += 1;
    }
    let mut limbs: Vec<u32> = vec![mantissa as u32, (mantissa >> 32) as u32];
    let multiply = |limbs: &mut Vec<u32>, factor: u32| {
        let mut carry = 0u64;
        for limb in limbs.iter_mut() {
            let product = u64::from(*limb) * u64::from(factor) + carry;
            *limb = product as u32;
            carry = product >> 32;
        }
        if carry != 0 {
            limbs.push(carry as u32);
        }
    };
    let mut scale = 0i64; // the integer is value * 10**scale
    if e >= 0 {
        for _ in 0..e {
            multiply(&mut limbs, 2);
        }
    } else {
        for _ in 0..-e {
            multiply(&mut limbs, 5);
        }
        scale = -e;
    }
    let mut text: Vec<u8> = Vec::new(); // least significant digit first
    while !(limbs.len() == 1 && limbs[0] == 0) {
        let mut remainder = 0u64;
        for limb in limbs.iter_mut().rev() {
            let current = (remainder << 32) | u64::from(*limb);
            *limb = (current / 1_000_000_000) as u32;
            remainder = current % 1_000_000_000;
        }
        while limbs.len() > 1 && *limbs.last().unwrap_or(&1) == 0 {
            limbs.pop();
        }
        for _ in 0..9 {
            text.push(b'0' + (remainder % 10) as u8);
            remainder /= 10;
        }
    }
    while text.len() > 1 && text.last() == Some(&b'0') {
        text.pop();
    }
    text.reverse();
    let point = text.len() as i64 - scale;
    (text, point)
}

// The digits rounded to `keep` digits (ties to even); a carry out of the first digit moves the point.
#[allow(dead_code)]
fn round_digits(digits: &mut Vec<u8>, point: &mut i64, keep: i64) {
    if keep >= digits.len() as i64 {
        return;
    }
    let mut up = false;
    if keep >= 0 {
        let k = keep as usize;
        let next = digits[k];
        let rest = digits[k + 1..].iter().any(|&d| d != b'0');
        let odd = k > 0 && (digits[k - 1] - b'0') % 2 == 1;
        up = next > b'5' || (next == b'5' && (rest || odd));
        digits.truncate(k);
    } else {
        digits.clear(); // far below half a unit of the kept place
    }
    if up {
        let mut i = digits.len();
        while i > 0 && digits[i - 1] == b'9' {
            i -= 1;
            digits[i] = b'0';
        }
        if i == 0 {
            digits.insert(0, b'1');
            *point += 1;
        } else {
            digits[i - 1] += 1;
        }
    }
}

#[allow(dead_code)]
fn reads_back(value: f64, digits: &[u8], point: i64) -> bool {
    let text = format!("0.{}e{}", std::str::from_utf8(digits).unwrap_or("0"), point);
    text.parse::<f64>().map(|v| v == value).unwrap_or(false)
}

// (digits without trailing zeros, decimal point position) of |value|, as David Gay's dtoa gives
// them: mode 0 the shortest digits that read back as the value (the nearest such), mode 2
// `ndigits` significant digits, mode 3 `ndigits` digits after the point; ties to even.
#[allow(dead_code)]
fn decimal_digits(value: f64, mode: i32, ndigits: i64) -> (Vec<u8>, i64) {
    let value = value.abs();
    let (exact, point) = exact_decimal(value);
    if exact == b"0" {
        return (vec![b'0'], 1);
    }
    let (mut digits, mut decpt) = (exact.clone(), point);
    if mode == 0 {
        'lengths: for n in 1..=17i64 {
            let (mut d, mut p) = (exact.clone(), point);
            round_digits(&mut d, &mut p, n);
            if d.is_empty() {
                continue;
            }
            if reads_back(value, &d, p) {
                digits = d;
                decpt = p;
                break;
            }
            // The nearest n-digit decimal may fall just outside a lopsided interval (a power of
            // two) where a neighbour on the other side does not.
            for step in [-1i32, 1] {
                let (mut c, mut cp) = (d.clone(), p);
                let mut i = c.len();
                if step > 0 {
                    while i > 0 && c[i - 1] == b'9' {
                        i -= 1;
                        c[i] = b'0';
                    }
                    if i == 0 {
                        c.insert(0, b'1');
                        c.pop();
                        cp += 1;
                    } else {
                        c[i - 1] += 1;
                    }
                } else {
                    while i > 0 && c[i - 1] == b'0' {
                        i -= 1;
                        c[i] = b'9';
                    }
                    if i == 0 {
                        continue;
                    }
                    c[i - 1] -= 1;
                    if c[0] == b'0' {
                        continue; // fewer digits: a shorter candidate, already tried
                    }
                }
                if reads_back(value, &c, cp) {
                    digits = c;
                    decpt = cp;
                    break 'lengths;
                }
            }
        }
    } else {
        let keep = if mode == 2 { ndigits } else { point + ndigits };
        round_digits(&mut digits, &mut decpt, keep);
    }
    while digits.last() == Some(&b'0') {
        digits.pop();
    }
    if digits.is_empty() {
        return (vec![b'0'], 1);
    }
    (digits, decpt)
}

// CPython's PyOS_double_to_string(value, code, precision, flags) for code e, f, g or r (lower
// case; `upper` for E, F, G): the sign, then digits, '.', exponent, laid out as format_float_short.
#[allow(dead_code)]
fn double_to_string(value: f64, code: char, mut precision: i64, upper: bool, add_dot_0: bool, alternate: bool,
                    no_neg_0: bool) -> String {
    if value.is_nan() {
        return if upper { "NAN" } else { "nan" }.to_string(); // CPython never signs a nan
    }
    if value.is_infinite() {
        return format!("{}{}", if value < 0.0 { "-" } else { "" }, if upper { "INF" } else { "inf" });
    }
    let mut mode = 0;
    match code {
        'e' => {
            mode = 2;
            precision += 1;
        }
        'f' => mode = 3,
        'g' => {
            mode = 2;
            if precision == 0 {
                precision = 1;
            }
        }
        _ => {}
    }
    let (digits, mut decpt) = decimal_digits(value, mode, precision);
    let mut negative = value.is_sign_negative();
    if no_neg_0 && negative && digits == b"0" {
        negative = false;
    }
    let n = digits.len() as i64;
    let mut use_exp = false;
    let mut end = n;
    let mut exp = 0i64;
    match code {
        'e' => {
            use_exp = true;
            end = precision;
        }
        'f' => end = decpt + precision,
        'g' => {
            if decpt <= -4 || decpt > (if add_dot_0 { precision - 1 } else { precision }) {
                use_exp = true;
            }
            if alternate {
                end = precision;
            }
        }
        _ => {
            if decpt <= -4 || decpt > 16 {
                use_exp = true;
            }
        }
    }
    if use_exp {
        exp = decpt - 1;
        decpt = 1;
    }
    let start = if decpt <= 0 { decpt - 1 } else { 0 };
    end = if !use_exp && add_dot_0 { end.max(decpt + 1) } else { end.max(decpt) };
    let zeros = |n: i64| "0".repeat(n.max(0) as usize);
    let text = std::str::from_utf8(&digits).unwrap_or("0");
    let mut out = String::from(if negative { "-" } else { "" });
    if decpt <= 0 {
        out += &zeros(decpt - start);
        out.push('.');
        out += &zeros(-decpt);
    } else {
        out += &zeros(-start);
    }
    if 0 < decpt && decpt <= n {
        out += &text[..decpt as usize];
        out.push('.');
        out += &text[decpt as usize..];
    } else {
        out += text;
    }
    if n < decpt {
        out += &zeros(decpt - n);
        out.push('.');
        out += &zeros(end - decpt);
    } else {
        out += &zeros(end - n);
    }
    if out.ends_with('.') && !alternate {
        out.pop();
    }
    if use_exp {
        out.push(if upper { 'E' } else { 'e' });
        out.push(if exp < 0 { '-' } else { '+' });
        out += &format!("{:02}", exp.abs());
    }
    out
}

fn unknown_code(type_name: &str) -> Error {
    Error::value(format!("Unknown format code for object of type '{type_name}'"))
}

// format(float, spec) once the spec is parsed: CPython's format_float_internal.
#[allow(dead_code)]
fn format_float_parsed(mut value: f64, spec: &Spec) -> Result<String> {
    let mut kind = spec.kind;
    let mut precision = spec.precision;
    let mut default_precision = 6;
    let (mut add_dot_0, mut add_pct, mut locale_n) = (false, false, false);
    if precision > i64::from(i32::MAX) {
        return Err(Error::value("precision too big"));
    }
    if kind == '\0' {
        add_dot_0 = true;
        kind = 'r';
        default_precision = 0;
    }
    if kind == 'n' {
        kind = 'g';
        locale_n = true;
    }
    if kind == '%' {
        kind = 'f';
        value *= 100.0;
        add_pct = true;
    }
    if precision < 0 {
        precision = default_precision;
    } else if kind == 'r' {
        kind = 'g';
    }
    let upper = matches!(kind, 'E' | 'F' | 'G');
    let code = kind.to_ascii_lowercase();
    let mut body = double_to_string(value, code, precision, upper, add_dot_0, spec.alternate, spec.no_neg_0);
    if add_pct {
        body.push('%');
    }
    let negative = body.starts_with('-');
    let rest = if negative { &body[1..] } else { &body[..] };
    let digit_end = rest.find(|c: char| !c.is_ascii_digit()).unwrap_or(rest.len());
    let digits = &rest[..digit_end];
    let has_decimal = rest[digit_end..].starts_with('.');
    let remainder = &rest[digit_end + usize::from(has_decimal)..];
    let separator = if locale_n { '\0' } else { spec.grouping };
    Ok(layout_number(spec, negative, "", digits, has_decimal, remainder, remainder.len() as i64, separator, 3))
}

pub fn builtins_format__float(value: f64, format_spec: &str) -> Result<String> {
    // format(x, "") is str(x), which is repr(x): the spec parsed as empty gives exactly that.
    let spec = parse(format_spec, '\0', '>')?;
    match spec.kind {
        '\0' | 'e' | 'E' | 'f' | 'F' | 'g' | 'G' | 'n' | '%' => format_float_parsed(value, &spec),
        _ => Err(unknown_code("float")),
    }
}
