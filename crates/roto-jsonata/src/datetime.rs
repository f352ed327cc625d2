//! Dates and times: `$fromMillis`/`$now` (ISO 8601 by default, or an XPath picture string
//! such as `[Y0001]-[M01]-[D01] [H01]:[m01]`) and `$toMillis` (ISO 8601, or the same kind of
//! picture). Civil dates are computed directly (proleptic Gregorian, UTC plus an offset).

use crate::error::Error;
use crate::functions::{num_arg, str_arg};
use crate::value::V;

type Res = Result<Option<V>, Error>;
type Args = Vec<Option<V>>;

/// The furthest instant from the epoch a JavaScript `Date` holds; beyond it the reference
/// prints NaN fields.
const MAX_MILLIS: f64 = 8.64e15;

const MONTHS: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];
const DAYS: [&str; 7] = [
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
    "Sunday",
];

fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = if y >= 0 { y } else { y - 399 } / 400;
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = if z >= 0 { z } else { z - 146_096 } / 146_097;
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (
        if m <= 2 {
            yoe + era * 400 + 1
        } else {
            yoe + era * 400
        },
        m,
        d,
    )
}

/// The parts of an instant in a time zone.
struct Parts {
    year: i64,
    month: i64,
    day: i64,
    hour: i64,
    minute: i64,
    second: i64,
    milli: i64,
    weekday: i64,
    yday: i64,
    offset: i64,
}

fn parts(millis: i64, offset_minutes: i64) -> Parts {
    let local = millis + offset_minutes * 60_000;
    let days = local.div_euclid(86_400_000);
    let rem = local.rem_euclid(86_400_000);
    let (year, month, day) = civil_from_days(days);
    Parts {
        year,
        month,
        day,
        hour: rem / 3_600_000,
        minute: rem / 60_000 % 60,
        second: rem / 1000 % 60,
        milli: rem % 1000,
        weekday: (days + 3).rem_euclid(7),
        yday: days - days_from_civil(year, 1, 1) + 1,
        offset: offset_minutes,
    }
}

fn parse_offset(tz: &str) -> Option<i64> {
    let (sign, rest) = match tz.chars().next()? {
        '+' => (1, &tz[1..]),
        '-' => (-1, &tz[1..]),
        _ => (1, tz),
    };
    let digits: String = rest.chars().filter(char::is_ascii_digit).collect();
    let (h, m) = match digits.len() {
        1 | 2 => (digits.parse::<i64>().ok()?, 0),
        3 | 4 => {
            let split = digits.len() - 2;
            (
                digits[..split].parse::<i64>().ok()?,
                digits[split..].parse::<i64>().ok()?,
            )
        }
        _ => return None,
    };
    Some(sign * (h * 60 + m))
}

/// `$fromMillis(millis, picture, timezone)`.
pub(crate) fn from_millis(a: Args) -> Res {
    let Some(millis) = num_arg(&a, 0) else {
        return Ok(None);
    };
    let picture = str_arg(&a, 1);
    let tz = str_arg(&a, 2);
    let offset = tz.and_then(parse_offset).unwrap_or(0);
    if millis.abs() > MAX_MILLIS {
        return Ok(Some(V::str("0NaN-NaN-NaNTNaN:NaN:NaN.NaNZ")));
    }
    let p = parts(millis.floor() as i64, offset);
    let text = match (picture, tz) {
        (None, None) => format!(
            "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z",
            p.year, p.month, p.day, p.hour, p.minute, p.second, p.milli
        ),
        (None, Some(_)) => {
            format_picture(&p, "[Y0001]-[M01]-[D01]T[H01]:[m01]:[s01].[f001][Z01:01t]")?
        }
        (Some(pic), _) => format_picture(&p, pic)?,
    };
    Ok(Some(V::string(text)))
}

fn format_picture(p: &Parts, picture: &str) -> Result<String, Error> {
    let chars: Vec<char> = picture.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == '[' && chars.get(i + 1) == Some(&'[') {
            out.push('[');
            i += 2;
        } else if c == ']' && chars.get(i + 1) == Some(&']') {
            out.push(']');
            i += 2;
        } else if c == '[' {
            let end = (i + 1..chars.len())
                .find(|&j| chars[j] == ']')
                .ok_or_else(|| Error::new("D3135"))?;
            let marker: String = chars[i + 1..end]
                .iter()
                .filter(|c| !c.is_whitespace())
                .collect();
            out.push_str(&component(p, &marker)?);
            i = end + 1;
        } else {
            out.push(c);
            i += 1;
        }
    }
    Ok(out)
}

fn name_case(name: &str, modifier: &str) -> String {
    match modifier {
        "N" => name.to_uppercase(),
        "n" => name.to_lowercase(),
        _ => name.to_string(),
    }
}

fn component(p: &Parts, marker: &str) -> Result<String, Error> {
    let mut chars = marker.chars();
    let spec = chars.next().unwrap_or(' ');
    let rest: String = chars.collect();
    let (modifier, width) = match rest.split_once(',') {
        Some((m, w)) => (m.to_string(), Some(w.to_string())),
        None => (rest, None),
    };
    let max_width = width
        .as_deref()
        .and_then(|w| w.split('-').next_back())
        .and_then(|w| w.parse::<usize>().ok());
    let value = match spec {
        'Y' => p.year,
        'M' => p.month,
        'D' => p.day,
        'd' => p.yday,
        'F' => p.weekday + 1,
        'H' => p.hour,
        'h' => (p.hour + 11) % 12 + 1,
        'm' => p.minute,
        's' => p.second,
        'f' => p.milli,
        'P' => {
            let text = if p.hour < 12 { "am" } else { "pm" };
            return Ok(name_case(
                text,
                if modifier.is_empty() { "n" } else { &modifier },
            ));
        }
        'Z' | 'z' => return Ok(zone(p.offset, spec, &modifier)),
        'E' => return Ok("ISO".into()),
        'C' => return Ok("ISO".into()),
        _ => {
            return Err(
                Error::new("D3132").value(serde_json::Value::from(spec.to_string()).to_string())
            )
        }
    };
    let modifier = if modifier.is_empty() {
        match spec {
            'F' => "n".to_string(),
            'm' | 's' => "01".to_string(),
            _ => "1".to_string(),
        }
    } else {
        modifier
    };
    if modifier.starts_with('N') || modifier.starts_with('n') {
        let name = match spec {
            'M' => MONTHS[(p.month - 1) as usize],
            'F' => DAYS[p.weekday as usize],
            _ => {
                return Err(Error::new("D3133")
                    .value(serde_json::Value::from(spec.to_string()).to_string()))
            }
        };
        let mut text = name_case(name, &modifier);
        if let Some(max) = max_width {
            text = text.chars().take(max).collect();
        }
        return Ok(text);
    }
    if spec == 'f' {
        let digits = modifier.chars().filter(char::is_ascii_digit).count().max(1);
        let frac = format!("{:03}", p.milli);
        let mut frac: String = frac
            .chars()
            .chain(std::iter::repeat('0'))
            .take(digits.max(3))
            .collect();
        frac.truncate(digits);
        return Ok(frac);
    }
    let digits = modifier.chars().filter(char::is_ascii_digit).count().max(1);
    let mut text = format!("{:0width$}", value, width = digits);
    if modifier.ends_with('o') {
        text.push_str(ordinal_suffix(value));
    }
    if spec == 'Y' && (digits == 2 || max_width == Some(2)) {
        text = format!("{:02}", value % 100);
    }
    Ok(text)
}

/// English ordinal suffix: 1st, 2nd, 3rd, 4th, 11th, 12th, 13th, 21st...
pub(crate) fn ordinal_suffix(n: i64) -> &'static str {
    match (n % 10, n % 100) {
        (_, 11..=13) => "th",
        (1, _) => "st",
        (2, _) => "nd",
        (3, _) => "rd",
        _ => "th",
    }
}

fn zone(offset: i64, spec: char, modifier: &str) -> String {
    if offset == 0 && modifier.ends_with('t') {
        return "Z".into();
    }
    let sign = if offset < 0 { '-' } else { '+' };
    let (h, m) = (offset.abs() / 60, offset.abs() % 60);
    let body = if modifier.trim_end_matches('t').contains(':') || modifier.is_empty() {
        format!("{sign}{h:02}:{m:02}")
    } else {
        format!("{sign}{h:02}{m:02}")
    };
    if spec == 'z' {
        return format!("GMT{body}");
    }
    body
}

/// `$toMillis(timestamp, picture)`.
pub(crate) fn to_millis(a: Args, now: f64) -> Res {
    let Some(s) = str_arg(&a, 0) else {
        return Ok(None);
    };
    let invalid = || Error::new("D3110").value(serde_json::Value::from(s).to_string());
    match str_arg(&a, 1) {
        None => parse_iso(s).map(|m| Some(V::Num(m))).ok_or_else(invalid),
        Some(picture) => parse_picture(s, picture, now),
    }
}

fn take_digits(chars: &[char], i: &mut usize, max: usize) -> Option<i64> {
    let start = *i;
    while *i < chars.len() && *i - start < max && chars[*i].is_ascii_digit() {
        *i += 1;
    }
    if *i == start {
        return None;
    }
    chars[start..*i].iter().collect::<String>().parse().ok()
}

/// An ISO 8601 timestamp's milliseconds; a well-formed one naming no real instant (month 13)
/// is NaN, as JavaScript's `Date.parse` answers.
fn parse_iso(s: &str) -> Option<f64> {
    let chars: Vec<char> = s.chars().collect();
    let mut i = 0;
    let year = take_digits(&chars, &mut i, 4)?;
    if i != 4 {
        return None;
    }
    let field = |sep: char, i: &mut usize| -> Option<Option<i64>> {
        if chars.get(*i) != Some(&sep) {
            return Some(None);
        }
        *i += 1;
        let start = *i;
        let v = take_digits(&chars, i, 2)?;
        (*i - start == 2).then_some(Some(v))
    };
    let month = field('-', &mut i)?.unwrap_or(1);
    let day = field('-', &mut i)?.unwrap_or(1);
    let (mut hour, mut minute, mut second, mut milli) = (0, 0, 0, 0);
    if chars.get(i) == Some(&'T') {
        i += 1;
        hour = take_digits(&chars, &mut i, 2)?;
        minute = field(':', &mut i)??;
        second = field(':', &mut i)?.unwrap_or(0);
        if chars.get(i) == Some(&'.') {
            i += 1;
            let start = i;
            while i < chars.len() && chars[i].is_ascii_digit() {
                i += 1;
            }
            let frac: String = chars[start..i]
                .iter()
                .chain(['0', '0', '0'].iter())
                .take(3)
                .collect();
            milli = frac.parse().ok()?;
        }
    }
    let mut offset = 0;
    match chars.get(i) {
        Some('Z') => i += 1,
        Some(sign @ ('+' | '-')) => {
            let rest: String = chars[i..].iter().collect();
            offset = parse_offset(&rest)?;
            let _ = sign;
            i = chars.len();
        }
        _ => {}
    }
    if i != chars.len() {
        return None;
    }
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) || hour > 24 {
        return Some(f64::NAN);
    }
    let days = days_from_civil(year, month, day);
    Some(
        (days * 86_400_000 + hour * 3_600_000 + minute * 60_000 + second * 1000 + milli
            - offset * 60_000) as f64,
    )
}

fn parse_picture(s: &str, picture: &str, now: f64) -> Res {
    let text: Vec<char> = s.chars().collect();
    let pic: Vec<char> = picture.chars().collect();
    let (mut year, mut month, mut day, mut hour, mut minute, mut second, mut milli, mut offset) =
        (None, 1, 1, 0, 0, 0, 0, 0);
    let mut pm = None;
    let mut date_given = false;
    let (mut i, mut j) = (0, 0);
    while j < pic.len() {
        if pic[j] != '[' {
            if text.get(i) != Some(&pic[j]) {
                return Ok(None);
            }
            i += 1;
            j += 1;
            continue;
        }
        let end = (j + 1..pic.len())
            .find(|&k| pic[k] == ']')
            .ok_or_else(|| Error::new("D3135"))?;
        let marker: String = pic[j + 1..end].iter().collect();
        j = end + 1;
        let spec = marker.chars().next().unwrap_or(' ');
        let modifier = &marker[spec.len_utf8()..];
        if modifier.starts_with('N') || modifier.starts_with('n') {
            let names: &[&str] = if spec == 'M' { &MONTHS } else { &DAYS };
            let rest: String = text[i..].iter().collect::<String>().to_lowercase();
            let found = names
                .iter()
                .enumerate()
                .find(|(_, n)| rest.starts_with(&n.to_lowercase()));
            let Some((index, name)) = found.or_else(|| {
                names
                    .iter()
                    .enumerate()
                    .find(|(_, n)| rest.starts_with(&n[..3].to_lowercase()))
            }) else {
                return Ok(None);
            };
            let len = if rest.starts_with(&name.to_lowercase()) {
                name.len()
            } else {
                3
            };
            i += len;
            if spec == 'M' {
                month = index as i64 + 1;
                date_given = true;
            }
            continue;
        }
        if spec == 'P' {
            let rest: String = text[i..].iter().take(2).collect::<String>().to_lowercase();
            pm = Some(rest == "pm");
            i += 2;
            continue;
        }
        if spec == 'Z' || spec == 'z' {
            let rest: String = text[i..].iter().collect();
            let rest = rest.strip_prefix("GMT").unwrap_or(&rest);
            if rest.starts_with('Z') {
                i += 1;
                continue;
            }
            let len = rest
                .chars()
                .take_while(|c| c.is_ascii_digit() || matches!(c, '+' | '-' | ':'))
                .count();
            offset = parse_offset(&rest[..len]).ok_or_else(|| Error::new("D3110"))?;
            i = text.len().min(i + len + if spec == 'z' { 3 } else { 0 });
            continue;
        }
        let width = modifier.chars().filter(char::is_ascii_digit).count();
        let next_is_component = pic.get(j) == Some(&'[');
        let max = if next_is_component && width > 0 {
            width
        } else {
            usize::MAX
        };
        let Some(v) = take_digits(&text, &mut i, max) else {
            return Ok(None);
        };
        if matches!(spec, 'Y' | 'M' | 'D' | 'd') {
            date_given = true;
        }
        match spec {
            'Y' => year = Some(v),
            'M' => month = v,
            'D' => day = v,
            'H' | 'h' => hour = v,
            'm' => minute = v,
            's' => second = v,
            'f' => milli = v,
            'd' => {
                month = 1;
                day = v;
            }
            _ => {
                return Err(Error::new("D3132")
                    .value(serde_json::Value::from(spec.to_string()).to_string()))
            }
        }
    }
    let today = parts(now as i64, 0);
    let year = year.unwrap_or(today.year);
    if !date_given {
        month = today.month;
        day = today.day;
    }
    if let Some(pm) = pm {
        hour %= 12;
        if pm {
            hour += 12;
        }
    }
    let days = days_from_civil(year, month, 1) + day - 1;
    let millis = days * 86_400_000 + hour * 3_600_000 + minute * 60_000 + second * 1000 + milli
        - offset * 60_000;
    Ok(Some(V::Num(millis as f64)))
}
