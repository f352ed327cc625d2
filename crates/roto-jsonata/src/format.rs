//! Number and text formatting functions: `$formatNumber` (XPath picture strings: grouping,
//! decimal places, percent), `$formatBase`, `$formatInteger`/`$parseInteger` (decimal,
//! roman and alphabetic pictures), base64 and URL encoding.

use base64::Engine;

use crate::error::Error;
use crate::functions::{arg, num_arg, round, str_arg};
use crate::value::V;

type Res = Result<Option<V>, Error>;
type Args = Vec<Option<V>>;

struct Picture {
    prefix: String,
    suffix: String,
    min_int: usize,
    grouping: Vec<usize>,
    min_frac: usize,
    max_frac: usize,
    percent: f64,
}

fn parse_picture(text: &str, decimal: char, group: char) -> Result<Picture, Error> {
    let chars: Vec<char> = text.chars().collect();
    let active = |c: char| c == '#' || c.is_ascii_digit() || c == decimal || c == group;
    let first = chars.iter().position(|c| active(*c)).unwrap_or(chars.len());
    let last = chars
        .iter()
        .rposition(|c| active(*c))
        .map_or(first, |i| i + 1);
    let prefix: String = chars[..first].iter().collect();
    let suffix: String = chars[last.max(first)..].iter().collect();
    let body: String = chars[first..last.max(first)].iter().collect();
    if body.matches(decimal).count() > 1 {
        return Err(Error::new("D3081"));
    }
    let (percents, permilles) = (text.matches('%').count(), text.matches('\u{2030}').count());
    if percents > 1 {
        return Err(Error::new("D3082"));
    }
    if permilles > 1 {
        return Err(Error::new("D3083"));
    }
    if percents > 0 && permilles > 0 {
        return Err(Error::new("D3084"));
    }
    let (int_part, frac_part) = match body.split_once(decimal) {
        Some((i, f)) => (i.to_string(), f.to_string()),
        None => (body.clone(), String::new()),
    };
    if !int_part
        .chars()
        .chain(frac_part.chars())
        .any(|c| c == '#' || c.is_ascii_digit())
    {
        return Err(Error::new("D3085"));
    }
    let min_int = int_part.chars().filter(|c| c.is_ascii_digit()).count();
    let mut grouping = Vec::new();
    let mut count = 0;
    for c in int_part.chars().rev() {
        if c == group {
            grouping.push(count);
        } else {
            count += 1;
        }
    }
    let min_frac = frac_part.chars().filter(|c| c.is_ascii_digit()).count();
    let max_frac = frac_part
        .chars()
        .filter(|c| *c == '#' || c.is_ascii_digit())
        .count();
    let both = format!("{prefix}{suffix}");
    let percent = if both.contains('%') {
        100.0
    } else if both.contains('\u{2030}') {
        1000.0
    } else {
        1.0
    };
    Ok(Picture {
        prefix,
        suffix,
        min_int,
        grouping,
        min_frac,
        max_frac,
        percent,
    })
}

fn group_digits(digits: &str, grouping: &[usize], sep: char) -> String {
    if grouping.is_empty() {
        return digits.to_string();
    }
    let regular = grouping[0] > 0
        && grouping
            .iter()
            .enumerate()
            .all(|(i, g)| *g == grouping[0] * (i + 1));
    let chars: Vec<char> = digits.chars().collect();
    let mut out = Vec::new();
    for (i, c) in chars.iter().rev().enumerate() {
        let boundary = if regular {
            i > 0 && i % grouping[0] == 0
        } else {
            grouping.contains(&i) && i > 0
        };
        if boundary {
            out.push(sep);
        }
        out.push(*c);
    }
    out.iter().rev().collect()
}

/// `$formatNumber(number, picture, options)`.
pub(crate) fn format_number_fn(a: Args) -> Res {
    let Some(n) = num_arg(&a, 0) else {
        return Ok(None);
    };
    let picture = str_arg(&a, 1).unwrap_or("");
    let option = |name: &str, default: char| {
        match arg(&a, 2) {
            Some(V::Obj(o)) => o
                .map
                .get(name)
                .and_then(V::as_str)
                .and_then(|s| s.chars().next()),
            _ => None,
        }
        .unwrap_or(default)
    };
    let decimal = option("decimal-separator", '.');
    let group = option("grouping-separator", ',');
    let minus = option("minus-sign", '-');
    let subs: Vec<&str> = picture.split(';').collect();
    if subs.len() > 2 {
        return Err(Error::new("D3080"));
    }
    let negative = n < 0.0;
    let (pic, explicit_negative) = match (negative, subs.get(1)) {
        (true, Some(neg)) => (parse_picture(neg, decimal, group)?, true),
        _ => (parse_picture(subs[0], decimal, group)?, false),
    };
    let value = round(n.abs() * pic.percent, pic.max_frac as f64);
    let fixed = format!("{:.*}", pic.max_frac, value);
    let (int_digits, frac_digits) = fixed.split_once('.').unwrap_or((&fixed, ""));
    let mut frac = frac_digits.to_string();
    while frac.len() > pic.min_frac && frac.ends_with('0') {
        frac.pop();
    }
    let mut int = int_digits.trim_start_matches('0').to_string();
    while int.len() < pic.min_int {
        int.insert(0, '0');
    }
    if int.is_empty() && frac.is_empty() {
        int.push('0');
    }
    let mut out = String::new();
    if negative && !explicit_negative {
        out.push(minus);
    }
    out.push_str(&pic.prefix);
    out.push_str(&group_digits(&int, &pic.grouping, group));
    if !frac.is_empty() {
        out.push(decimal);
        out.push_str(&frac);
    }
    out.push_str(&pic.suffix);
    Ok(Some(V::string(out)))
}

/// `$formatBase(number, radix)`.
pub(crate) fn format_base(a: Args) -> Res {
    let Some(n) = num_arg(&a, 0) else {
        return Ok(None);
    };
    let radix = num_arg(&a, 1).unwrap_or(10.0);
    if !(2.0..=36.0).contains(&radix) {
        return Err(Error::new("D3100").value(crate::value::format_number(radix)));
    }
    let n = round(n, 0.0);
    let radix = radix as u32;
    let mut magnitude = n.abs() as u128;
    let mut digits = Vec::new();
    loop {
        let d = (magnitude % u128::from(radix)) as u32;
        digits.push(char::from_digit(d, radix).unwrap_or('0'));
        magnitude /= u128::from(radix);
        if magnitude == 0 {
            break;
        }
    }
    if n < 0.0 {
        digits.push('-');
    }
    Ok(Some(V::string(digits.iter().rev().collect())))
}

const ROMAN: &[(u64, &str)] = &[
    (1000, "m"),
    (900, "cm"),
    (500, "d"),
    (400, "cd"),
    (100, "c"),
    (90, "xc"),
    (50, "l"),
    (40, "xl"),
    (10, "x"),
    (9, "ix"),
    (5, "v"),
    (4, "iv"),
    (1, "i"),
];

/// The largest roman numeral written (ten thousand `M`s); the reference overflows its stack
/// on larger ones.
const MAX_ROMAN: u64 = 10_000_000;

fn roman(mut n: u64) -> String {
    let mut out = String::new();
    for (value, text) in ROMAN {
        while n >= *value {
            out.push_str(text);
            n -= value;
        }
    }
    out
}

fn letters(mut n: u64) -> String {
    let mut out = Vec::new();
    while n > 0 {
        n -= 1;
        out.push((b'a' + (n % 26) as u8) as char);
        n /= 26;
    }
    out.iter().rev().collect()
}

/// `$formatInteger(number, picture)` for decimal (`#,##0`, `000`), roman (`I`, `i`) and
/// alphabetic (`A`, `a`) pictures.
pub(crate) fn format_integer_fn(a: Args) -> Res {
    let Some(n) = num_arg(&a, 0) else {
        return Ok(None);
    };
    let picture = str_arg(&a, 1).unwrap_or("0");
    let (primary, modifier) = picture.split_once(';').unwrap_or((picture, ""));
    let ordinal = modifier.starts_with('o');
    let int = n.trunc();
    let magnitude = int.abs() as u64;
    let sign = if int < 0.0 { "-" } else { "" };
    if matches!(primary, "I" | "i") && magnitude > MAX_ROMAN {
        return Err(Error::new("U1001"));
    }
    let body = match primary {
        "w" | "W" | "Ww" => {
            crate::words::case(&crate::words::to_words(magnitude, ordinal), primary)
        }
        "I" => roman(magnitude).to_uppercase(),
        "i" => roman(magnitude),
        "A" => letters(magnitude).to_uppercase(),
        "a" => letters(magnitude),
        _ => {
            let pic = parse_picture(primary, '.', ',')?;
            let mut digits = magnitude.to_string();
            while digits.len() < pic.min_int.max(1) {
                digits.insert(0, '0');
            }
            let mut text = group_digits(&digits, &pic.grouping, ',');
            if ordinal {
                text.push_str(crate::datetime::ordinal_suffix(magnitude as i64));
            }
            text
        }
    };
    Ok(Some(V::string(format!("{sign}{body}"))))
}

/// `$parseInteger(string, picture)`, the inverse of `$formatInteger`.
pub(crate) fn parse_integer_fn(a: Args) -> Res {
    let Some(s) = str_arg(&a, 0) else {
        return Ok(None);
    };
    let picture = str_arg(&a, 1).unwrap_or("0");
    let primary = picture.split(';').next().unwrap_or(picture);
    let value = match primary {
        "I" | "i" => {
            let lower = s.to_lowercase();
            let mut total = 0i64;
            let values: Vec<i64> = lower
                .chars()
                .map(|c| match c {
                    'i' => 1,
                    'v' => 5,
                    'x' => 10,
                    'l' => 50,
                    'c' => 100,
                    'd' => 500,
                    'm' => 1000,
                    _ => 0,
                })
                .collect();
            for (i, v) in values.iter().enumerate() {
                if values.get(i + 1).is_some_and(|next| next > v) {
                    total -= v;
                } else {
                    total += v;
                }
            }
            total as f64
        }
        "A" | "a" => s.to_lowercase().chars().fold(0.0, |acc, c| {
            acc * 26.0 + f64::from((c as u32).saturating_sub('a' as u32 - 1))
        }),
        "w" | "W" | "Ww" => crate::words::from_words(s).map_or(f64::NAN, |n| n as f64),
        _ => {
            let digits: String = s
                .chars()
                .filter(|c| c.is_ascii_digit() || *c == '-')
                .collect();
            digits.parse::<f64>().unwrap_or(0.0)
        }
    };
    Ok(Some(V::Num(value)))
}

/// `$base64encode`: as the reference (Node's `binary` encoding), each UTF-16 unit's low byte.
pub(crate) fn base64_encode(a: Args) -> Res {
    let Some(s) = str_arg(&a, 0) else {
        return Ok(None);
    };
    let bytes: Vec<u8> = s.encode_utf16().map(|u| (u & 0xff) as u8).collect();
    Ok(Some(V::string(
        base64::engine::general_purpose::STANDARD.encode(bytes),
    )))
}

/// `$base64decode`: each decoded byte is one character (U+0000 to U+00FF), as the reference.
pub(crate) fn base64_decode(a: Args) -> Res {
    let Some(s) = str_arg(&a, 0) else {
        return Ok(None);
    };
    let cleaned: String = s
        .chars()
        .filter(|c| !c.is_whitespace() && *c != '=')
        .collect();
    let bytes = base64::engine::general_purpose::STANDARD_NO_PAD
        .decode(cleaned.as_bytes())
        .unwrap_or_default();
    Ok(Some(V::string(
        bytes.iter().map(|b| char::from(*b)).collect(),
    )))
}

/// `encodeURIComponent` (`component`) or `encodeURI`.
pub(crate) fn encode_url(a: Args, _name: &str, component: bool) -> Res {
    let Some(s) = str_arg(&a, 0) else {
        return Ok(None);
    };
    let keep = |c: char| {
        c.is_ascii_alphanumeric()
            || "-_.!~*'()".contains(c)
            || (!component && ";,/?:@&=+$#".contains(c))
    };
    let mut out = String::new();
    for c in s.chars() {
        if keep(c) {
            out.push(c);
        } else {
            let mut buf = [0u8; 4];
            for b in c.encode_utf8(&mut buf).bytes() {
                out.push_str(&format!("%{b:02X}"));
            }
        }
    }
    Ok(Some(V::string(out)))
}

/// `decodeURIComponent` (`component`) or `decodeURI`; a malformed escape is D3140.
pub(crate) fn decode_url(a: Args, name: &str, component: bool) -> Res {
    let Some(s) = str_arg(&a, 0) else {
        return Ok(None);
    };
    let malformed = || {
        Error::new("D3140")
            .token(name)
            .value(serde_json::Value::from(s).to_string())
    };
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] != b'%' {
            out.push(bytes[i]);
            i += 1;
            continue;
        }
        let hex = s.get(i + 1..i + 3).ok_or_else(malformed)?;
        let b = u8::from_str_radix(hex, 16).map_err(|_| malformed())?;
        if !component && b < 0x80 && ";,/?:@&=+$#".contains(b as char) {
            out.extend_from_slice(&bytes[i..i + 3]);
        } else {
            out.push(b);
        }
        i += 3;
    }
    String::from_utf8(out)
        .map(|s| Some(V::string(s)))
        .map_err(|_| malformed())
}
