// builtins.format, overload str: Python's format(value, format_spec), which is what an f-string
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

fn unknown_code(type_name: &str) -> Error {
    Error::value(format!("Unknown format code for object of type '{type_name}'"))
}


pub fn builtins_format__str(value: &str, format_spec: &str) -> Result<String> {
    if format_spec.is_empty() {
        return Ok(value.to_string());
    }
    let spec = parse(format_spec, 's', '<')?;
    if spec.kind != 's' {
        return Err(unknown_code("str"));
    }
    if spec.sign != '\0' {
        return Err(Error::value("Sign not allowed in string format specifier"));
    }
    if spec.no_neg_0 {
        return Err(Error::value("Negative zero coercion (z) not allowed in string format specifier"));
    }
    if spec.alternate {
        return Err(Error::value("Alternate form (#) not allowed in string format specifier"));
    }
    if spec.align == '=' {
        return Err(Error::value("'=' alignment not allowed in string format specifier"));
    }
    // Precision keeps the first code points; width pads by code points.
    let kept: &str = if spec.precision >= 0 {
        match value.char_indices().nth(spec.precision as usize) {
            Some((at, _)) => &value[..at],
            None => value,
        }
    } else {
        value
    };
    let length = kept.chars().count() as i64;
    let total = spec.width.max(length);
    let left = match spec.align {
        '>' => total - length,
        '^' => (total - length) / 2,
        _ => 0,
    };
    let right = total - length - left;
    let mut out = String::new();
    push_fill(&mut out, spec.fill, left);
    out.push_str(kept);
    push_fill(&mut out, spec.fill, right);
    Ok(out)
}
