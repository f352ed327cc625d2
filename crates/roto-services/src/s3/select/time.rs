//! S3 Select's timestamps: Ion timestamps (`2007T`, `2007-02-23`, `2007-02-23T12:14Z`,
//! `2007-02-23T12:14:33.079-08:00`) that keep the precision and offset they were written
//! with, and the date functions over them: `DATE_ADD`, `DATE_DIFF`, `EXTRACT`,
//! `TO_STRING` and `TO_TIMESTAMP` with their format patterns.
//!
//! A timestamp is its local date and time, its offset (unknown, `-00:00`, for dates and for
//! times written so) and its precision; arithmetic runs on the local fields through
//! `jiff`, comparisons on the instant. Format patterns are read into [`Piece`]s, with S3's
//! errors for the symbols and tokens it does not know.

use std::cmp::Ordering;

use jiff::civil::DateTime;
use jiff::{Span, Unit};
use roto_core::AwsError;

use super::sql::error;

/// How much of a timestamp was written, coarsest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Precision {
    Year,
    Month,
    Day,
    Minute,
    Second,
}

/// A part of a timestamp that the date functions name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DatePart {
    Year,
    Month,
    Day,
    Hour,
    Minute,
    Second,
    TimezoneHour,
    TimezoneMinute,
}

impl DatePart {
    /// The part a name stands for (any case); the offset's parts only where `zone`.
    pub fn named(name: &str, zone: bool) -> Option<DatePart> {
        Some(match name.to_ascii_lowercase().as_str() {
            "year" => DatePart::Year,
            "month" => DatePart::Month,
            "day" => DatePart::Day,
            "hour" => DatePart::Hour,
            "minute" => DatePart::Minute,
            "second" => DatePart::Second,
            "timezone_hour" if zone => DatePart::TimezoneHour,
            "timezone_minute" if zone => DatePart::TimezoneMinute,
            _ => return None,
        })
    }
}

/// An Ion timestamp.
#[derive(Debug, Clone, PartialEq)]
pub struct Timestamp {
    local: DateTime,
    /// Minutes east of UTC; `None` when unknown (`-00:00`, and every date).
    offset: Option<i32>,
    precision: Precision,
    /// Digits after the seconds' point (at `Second` precision).
    digits: u8,
}

const NANOS_PER_MINUTE: i128 = 60_000_000_000;

/// The error for arithmetic past the years a timestamp holds.
fn overflow() -> AwsError {
    error(
        "IntegerOverflow",
        "Int overflow or underflow in the SQL expression.",
    )
}

/// The error for text that is no timestamp.
pub fn parse_failure() -> AwsError {
    error(
        "ValueParseFailure",
        "A timestamp parse failure occurred in the SQL expression.",
    )
}

impl Timestamp {
    /// The instant `millis` after the epoch, in UTC to the millisecond (UTCNOW).
    pub fn from_millis(millis: i64) -> Timestamp {
        let instant =
            jiff::Timestamp::from_millisecond(millis).unwrap_or(jiff::Timestamp::UNIX_EPOCH);
        Timestamp {
            local: jiff::tz::Offset::UTC.to_datetime(instant),
            offset: Some(0),
            precision: Precision::Second,
            digits: 3,
        }
    }

    /// Reads Ion's text form; `None` when `text` is not a timestamp.
    pub fn parse(text: &str) -> Option<Timestamp> {
        let mut c = Cursor {
            s: text.as_bytes(),
            at: 0,
        };
        let year = c.digits(4)?;
        if c.eat(b'T') {
            return Timestamp::date(year, 1, 1, Precision::Year).filter(|_| c.end());
        }
        c.expect(b'-')?;
        let month = c.digits(2)?;
        if c.eat(b'T') {
            return Timestamp::date(year, month, 1, Precision::Month).filter(|_| c.end());
        }
        c.expect(b'-')?;
        let day = c.digits(2)?;
        if c.end() || (c.eat(b'T') && c.end()) {
            return Timestamp::date(year, month, day, Precision::Day);
        }
        let mut v = Fields {
            year,
            month: Some(month),
            day: Some(day),
            hour: c.digits(2)?,
            ..Fields::default()
        };
        c.expect(b':')?;
        v.minute = c.digits(2)?;
        let (mut digits, mut precision) = (0, Precision::Minute);
        if c.eat(b':') {
            v.second = c.digits(2)?;
            precision = Precision::Second;
            if c.eat(b'.') {
                let start = c.at;
                while c.peek().is_some_and(|b| b.is_ascii_digit()) {
                    c.at += 1;
                }
                digits = u8::try_from(c.at - start)
                    .ok()
                    .filter(|d| (1..=9).contains(d))?;
                v.nanos = nanos(&text[start..c.at])?;
            }
        }
        v.offset = c.offset()?;
        if !c.end() {
            return None;
        }
        v.build(precision, digits)
    }

    fn date(year: i32, month: i32, day: i32, precision: Precision) -> Option<Timestamp> {
        if year < 1 {
            return None;
        }
        let day = jiff::civil::Date::new(
            i16::try_from(year).ok()?,
            i8::try_from(month).ok()?,
            i8::try_from(day).ok()?,
        )
        .ok()?;
        Some(Timestamp {
            local: day.to_datetime(jiff::civil::Time::midnight()),
            offset: None,
            precision,
            digits: 0,
        })
    }

    /// Ion's text form, at the timestamp's precision.
    pub fn text(&self) -> String {
        let d = self.local;
        let day = format!("{:04}-{:02}-{:02}", d.year(), d.month(), d.day());
        match self.precision {
            Precision::Year => format!("{:04}T", d.year()),
            Precision::Month => format!("{:04}-{:02}T", d.year(), d.month()),
            Precision::Day => day,
            Precision::Minute | Precision::Second => {
                let mut out = format!("{day}T{:02}:{:02}", d.hour(), d.minute());
                if self.precision == Precision::Second {
                    out.push_str(&format!(":{:02}", d.second()));
                    if self.digits > 0 {
                        let nanos = format!("{:09}", d.subsec_nanosecond());
                        out.push('.');
                        out.push_str(&nanos[..usize::from(self.digits)]);
                    }
                }
                out.push_str(&match self.offset {
                    None => "-00:00".to_string(),
                    Some(0) => "Z".to_string(),
                    Some(m) => offset_text(m, true, true),
                });
                out
            }
        }
    }

    /// Nanoseconds since the epoch (an unknown offset counts as UTC).
    fn instant(&self) -> i128 {
        let utc = jiff::tz::Offset::UTC
            .to_timestamp(self.local)
            .map_or(0, |t| t.as_nanosecond());
        utc - i128::from(self.offset.unwrap_or(0)) * NANOS_PER_MINUTE
    }

    /// How two timestamps order in time.
    pub fn cmp_instant(&self, other: &Timestamp) -> Ordering {
        self.instant().cmp(&other.instant())
    }

    /// The date and time in UTC.
    fn utc(&self) -> DateTime {
        let minutes = Span::new().minutes(-i64::from(self.offset.unwrap_or(0)));
        self.local.checked_add(minutes).unwrap_or(self.local)
    }

    /// `DATE_ADD`: `quantity` of `part` added, the precision raised to show it.
    pub fn add(&self, part: DatePart, quantity: i64) -> Result<Timestamp, AwsError> {
        let (span, precision) = match part {
            DatePart::Year => (Span::new().try_years(quantity), Precision::Year),
            DatePart::Month => (Span::new().try_months(quantity), Precision::Month),
            DatePart::Day => (Span::new().try_days(quantity), Precision::Day),
            DatePart::Hour => (Span::new().try_hours(quantity), Precision::Minute),
            DatePart::Minute => (Span::new().try_minutes(quantity), Precision::Minute),
            _ => (Span::new().try_seconds(quantity), Precision::Second),
        };
        let local = self
            .local
            .checked_add(span.map_err(|_| overflow())?)
            .map_err(|_| overflow())?;
        Ok(Timestamp {
            local,
            precision: self.precision.max(precision),
            ..self.clone()
        })
    }

    /// `DATE_DIFF`: whole `part`s from `self` to `to` (negative when `to` is earlier).
    pub fn diff(&self, part: DatePart, to: &Timestamp) -> Result<i64, AwsError> {
        let unit = match part {
            DatePart::Year | DatePart::Month => {
                let unit = if part == DatePart::Year {
                    Unit::Year
                } else {
                    Unit::Month
                };
                let span = self.utc().until((unit, to.utc())).map_err(|_| overflow())?;
                return Ok(match unit {
                    Unit::Year => i64::from(span.get_years()),
                    _ => i64::from(span.get_months()),
                });
            }
            DatePart::Day => 24 * 60 * NANOS_PER_MINUTE,
            DatePart::Hour => 60 * NANOS_PER_MINUTE,
            DatePart::Minute => NANOS_PER_MINUTE,
            _ => 1_000_000_000,
        };
        i64::try_from((to.instant() - self.instant()) / unit).map_err(|_| overflow())
    }

    /// `EXTRACT`: one field of the local date and time, or of the offset.
    pub fn extract(&self, part: DatePart) -> f64 {
        let d = self.local;
        let offset = self.offset.unwrap_or(0);
        match part {
            DatePart::Year => f64::from(d.year()),
            DatePart::Month => f64::from(d.month()),
            DatePart::Day => f64::from(d.day()),
            DatePart::Hour => f64::from(d.hour()),
            DatePart::Minute => f64::from(d.minute()),
            DatePart::Second => f64::from(d.second()) + f64::from(d.subsec_nanosecond()) / 1e9,
            DatePart::TimezoneHour => f64::from(offset / 60),
            DatePart::TimezoneMinute => f64::from(offset % 60),
        }
    }

    /// `TO_STRING`: the timestamp written by a format pattern.
    pub fn format(&self, pattern: &str) -> Result<String, AwsError> {
        let mut out = String::new();
        for piece in pieces(pattern)? {
            match piece {
                Piece::Text(text) => out.push_str(&text),
                Piece::Field(symbol, n) => out.push_str(&self.field(symbol, n)),
            }
        }
        Ok(out)
    }

    /// One pattern field's text.
    fn field(&self, symbol: char, n: usize) -> String {
        let d = self.local;
        let number = |value: i64, width: usize| format!("{value:0width$}");
        let month = month_name(d.month());
        match (symbol, n) {
            ('y', 2) => number(i64::from(d.year()).rem_euclid(100), 2),
            ('y', 4) => number(i64::from(d.year()), 4),
            ('y', _) => d.year().to_string(),
            ('M', 3) => month[..3].to_string(),
            ('M', 4) => month,
            ('M', 5) => month[..1].to_string(),
            ('M', n) => number(i64::from(d.month()), n),
            ('d', n) => number(i64::from(d.day()), n),
            ('a', _) => if d.hour() < 12 { "AM" } else { "PM" }.to_string(),
            ('h', n) => number((i64::from(d.hour()) + 11) % 12 + 1, n),
            ('H', n) => number(i64::from(d.hour()), n),
            ('m', n) => number(i64::from(d.minute()), n),
            ('s', n) => number(i64::from(d.second()), n),
            ('S', n) => format!("{:09}", d.subsec_nanosecond())[..n].to_string(),
            ('n', _) => d.subsec_nanosecond().to_string(),
            ('X', _) if self.offset.unwrap_or(0) == 0 => "Z".to_string(),
            (_, n) => {
                let minutes = self.offset.unwrap_or(0);
                offset_text(minutes, n > 1 || minutes % 60 != 0, n == 3 || n == 5)
            }
        }
    }

    /// `TO_TIMESTAMP` with a pattern: `text` read field by field.
    pub fn parse_with(text: &str, pattern: &str) -> Result<Timestamp, AwsError> {
        let pieces = pieces(pattern)?;
        let (precision, digits) = check_parsing(&pieces)?;
        let mut c = Cursor {
            s: text.as_bytes(),
            at: 0,
        };
        let mut v = Fields::default();
        for piece in &pieces {
            match piece {
                Piece::Text(t) => {
                    if !c.s[c.at..].starts_with(t.as_bytes()) {
                        return Err(parse_failure());
                    }
                    c.at += t.len();
                }
                Piece::Field(symbol, n) => {
                    c.field(*symbol, *n, &mut v).ok_or_else(parse_failure)?
                }
            }
        }
        if !c.end() {
            return Err(parse_failure());
        }
        v.build(precision, digits).ok_or_else(parse_failure)
    }
}

/// A month's English name (`month` from 1), as jiff writes it.
fn month_name(month: i8) -> String {
    jiff::civil::Date::new(2000, month, 1)
        .map(|d| d.strftime("%B").to_string())
        .unwrap_or_default()
}

/// Nanoseconds from a fraction's digits.
fn nanos(fraction: &str) -> Option<i32> {
    format!("{fraction:0<9}").parse().ok()
}

/// An offset as `+07`, `+0700` or `+07:00` (minutes only when `with_minutes`).
fn offset_text(minutes: i32, with_minutes: bool, colon: bool) -> String {
    let sign = if minutes < 0 { '-' } else { '+' };
    let (h, m) = (minutes.abs() / 60, minutes.abs() % 60);
    match (with_minutes, colon) {
        (false, _) => format!("{sign}{h:02}"),
        (true, false) => format!("{sign}{h:02}{m:02}"),
        (true, true) => format!("{sign}{h:02}:{m:02}"),
    }
}

/// One piece of a format pattern: literal text, or a symbol repeated `n` times.
#[derive(Debug, PartialEq)]
enum Piece {
    Text(String),
    Field(char, usize),
}

/// How many times each symbol may repeat.
fn valid_counts(symbol: char) -> Option<&'static [usize]> {
    Some(match symbol {
        'y' => &[1, 2, 4],
        'M' | 'X' | 'x' => &[1, 2, 3, 4, 5],
        'd' | 'h' | 'H' | 'm' | 's' => &[1, 2],
        'a' | 'n' => &[1],
        'S' => &[1, 2, 3, 4, 5, 6, 7, 8, 9],
        _ => return None,
    })
}

/// Reads a format pattern: letters are symbols (a run of one letter a token), `'...'`
/// quotes text (`''` a quote), anything else stands for itself.
fn pieces(pattern: &str) -> Result<Vec<Piece>, AwsError> {
    let chars: Vec<char> = pattern.chars().collect();
    let mut pieces = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == '\'' {
            let (text, next) = quoted(&chars, i)?;
            pieces.push(Piece::Text(text));
            i = next;
        } else if c.is_ascii_alphabetic() {
            let n = chars[i..].iter().take_while(|&&d| d == c).count();
            let Some(counts) = valid_counts(c) else {
                return Err(error(
                    "EvaluatorInvalidTimestampFormatPatternSymbol",
                    "The timestamp format pattern contains a symbol in the SQL expression that is not valid.",
                ));
            };
            if !counts.contains(&n) {
                return Err(error(
                    "EvaluatorInvalidTimestampFormatPatternToken",
                    "The timestamp format pattern contains a token in the SQL expression that is not valid.",
                ));
            }
            pieces.push(Piece::Field(c, n));
            i += n;
        } else {
            pieces.push(Piece::Text(c.to_string()));
            i += 1;
        }
    }
    Ok(pieces)
}

/// Quoted text starting at `start` (`''` alone is a quote), and the index after it.
fn quoted(chars: &[char], start: usize) -> Result<(String, usize), AwsError> {
    if chars.get(start + 1) == Some(&'\'') {
        return Ok(("'".into(), start + 2));
    }
    let mut text = String::new();
    let mut i = start + 1;
    loop {
        match chars.get(i) {
            None => {
                return Err(error(
                    "EvaluatorUnterminatedTimestampFormatPatternToken",
                    "The timestamp format pattern contains an unterminated token in the SQL expression.",
                ))
            }
            Some('\'') if chars.get(i + 1) == Some(&'\'') => {
                text.push('\'');
                i += 2;
            }
            Some('\'') => return Ok((text, i + 1)),
            Some(&c) => {
                text.push(c);
                i += 1;
            }
        }
    }
}

/// Checks a pattern for parsing as S3 does (each field once, a 12-hour clock with AM/PM
/// and a 24-hour one without, no field without the coarser ones, no first-letter month),
/// and answers the precision and fraction digits it gives.
fn check_parsing(pieces: &[Piece]) -> Result<(Precision, u8), AwsError> {
    let mut seen: Vec<char> = Vec::new();
    let mut digits = 0;
    for piece in pieces {
        let Piece::Field(symbol, n) = piece else {
            continue;
        };
        if *symbol == 'M' && *n == 5 {
            return Err(error(
                "EvaluatorInvalidTimestampFormatPatternSymbolForParsing",
                "The timestamp format pattern contains a valid format symbol that cannot be applied to timestamp parsing in the SQL expression.",
            ));
        }
        // Symbols that set one field: both hour clocks the hour, S and n the fraction.
        let field = match symbol {
            'h' => 'H',
            'n' => 'S',
            'x' => 'X',
            s => *s,
        };
        if seen.contains(&field) {
            return Err(error(
                "EvaluatorTimestampFormatPatternDuplicateFields",
                "The timestamp format pattern contains multiple format specifiers representing the timestamp field in the SQL expression.",
            ));
        }
        seen.push(field);
        if *symbol == 'h' {
            seen.push('h');
        }
        if field == 'S' {
            digits = if *symbol == 'n' { 9 } else { *n as u8 };
        }
    }
    let has = |c: char| seen.contains(&c);
    if has('a') != has('h') {
        return Err(error(
            "EvaluatorTimestampFormatPatternHourClockAmPmMismatch",
            "The timestamp format pattern contains a 12-hour hour of day format symbol but doesn't also contain an AM/PM field, or it contains a 24-hour hour of day format specifier and contains an AM/PM field in the SQL expression.",
        ));
    }
    // Each field needs the coarser ones: year, month, day, hour, minute, second, fraction.
    let chain = ['y', 'M', 'd', 'H', 'm', 's', 'S'];
    let count = chain.iter().take_while(|&&c| has(c)).count();
    if count == 0 || chain[count..].iter().any(|&c| has(c)) || (has('X') && count < 5) {
        return Err(error(
            "EvaluatorInvalidTimestampFormatPattern",
            "The timestamp format string in the SQL expression is not valid.",
        ));
    }
    let precision = match count {
        1 => Precision::Year,
        2 => Precision::Month,
        3 => Precision::Day,
        4 | 5 => Precision::Minute,
        _ => Precision::Second,
    };
    Ok((precision, digits))
}

/// The fields read from a timestamp's text.
#[derive(Default)]
struct Fields {
    year: i32,
    month: Option<i32>,
    day: Option<i32>,
    hour: i32,
    pm: Option<bool>,
    minute: i32,
    second: i32,
    nanos: i32,
    offset: Option<i32>,
}

impl Fields {
    fn build(&self, precision: Precision, digits: u8) -> Option<Timestamp> {
        let (month, day) = (self.month.unwrap_or(1), self.day.unwrap_or(1));
        let mut t = Timestamp::date(self.year, month, day, precision)?;
        if precision < Precision::Minute {
            return Some(t);
        }
        let hour = match self.pm {
            Some(pm) if (1..=12).contains(&self.hour) => self.hour % 12 + if pm { 12 } else { 0 },
            Some(_) => return None,
            None => self.hour,
        };
        t.local = t
            .local
            .with()
            .hour(i8::try_from(hour).ok()?)
            .minute(i8::try_from(self.minute).ok()?)
            .second(i8::try_from(self.second).ok()?)
            .subsec_nanosecond(self.nanos)
            .build()
            .ok()?;
        t.offset = self.offset;
        t.digits = digits;
        Some(t)
    }
}

/// A reading position in a timestamp's text.
struct Cursor<'a> {
    s: &'a [u8],
    at: usize,
}

impl Cursor<'_> {
    fn peek(&self) -> Option<u8> {
        self.s.get(self.at).copied()
    }

    fn end(&self) -> bool {
        self.at == self.s.len()
    }

    fn eat(&mut self, b: u8) -> bool {
        let found = self.peek() == Some(b);
        if found {
            self.at += 1;
        }
        found
    }

    fn expect(&mut self, b: u8) -> Option<()> {
        self.eat(b).then_some(())
    }

    /// Exactly `n` digits.
    fn digits(&mut self, n: usize) -> Option<i32> {
        let text = self.s.get(self.at..self.at + n)?;
        if !text.iter().all(u8::is_ascii_digit) {
            return None;
        }
        self.at += n;
        std::str::from_utf8(text).ok()?.parse().ok()
    }

    /// Between `min` and `max` digits.
    fn number(&mut self, min: usize, max: usize) -> Option<i32> {
        let n = self.s[self.at..]
            .iter()
            .take(max)
            .take_while(|b| b.is_ascii_digit())
            .count();
        if n < min {
            return None;
        }
        self.digits(n)
    }

    /// Ion's `Z` or `+hh:mm`/`-hh:mm` (`-00:00` is an unknown offset).
    fn offset(&mut self) -> Option<Option<i32>> {
        if self.eat(b'Z') {
            return Some(Some(0));
        }
        let sign = self.sign()?;
        let h = self.digits(2)?;
        self.expect(b':')?;
        let m = self.digits(2)?;
        if h > 23 || m > 59 {
            return None;
        }
        Some((sign == 1 || h + m > 0).then_some(sign * (h * 60 + m)))
    }

    fn sign(&mut self) -> Option<i32> {
        let sign = match self.peek()? {
            b'+' => 1,
            b'-' => -1,
            _ => return None,
        };
        self.at += 1;
        Some(sign)
    }

    /// A pattern's offset: `Z`, `+hh`, `+hhmm` or `+hh:mm`.
    fn pattern_offset(&mut self) -> Option<i32> {
        if self.eat(b'Z') {
            return Some(0);
        }
        let sign = self.sign()?;
        let h = self.digits(2)?;
        self.eat(b':');
        let m = self.number(0, 2).unwrap_or(0);
        (h <= 23 && m <= 59).then_some(sign * (h * 60 + m))
    }

    /// A month's name (`n` 3: its first three letters), any case.
    fn month_name(&mut self, n: usize) -> Option<i32> {
        let rest = self.s[self.at..].to_ascii_lowercase();
        (1..=12).find_map(|month| {
            let name = month_name(month);
            let name = if n == 3 { &name[..3] } else { &name };
            rest.starts_with(name.to_ascii_lowercase().as_bytes())
                .then(|| self.at += name.len())
                .map(|()| i32::from(month))
        })
    }

    /// Reads one pattern field into `v`.
    fn field(&mut self, symbol: char, n: usize, v: &mut Fields) -> Option<()> {
        let wide = if n == 1 { 2 } else { n };
        match (symbol, n) {
            ('y', 2) => v.year = 2000 + self.digits(2)?,
            ('y', _) => v.year = self.number(n, 4)?,
            ('M', 3 | 4) => v.month = Some(self.month_name(n)?),
            ('M', _) => v.month = Some(self.number(n, wide)?),
            ('d', _) => v.day = Some(self.number(n, wide)?),
            ('a', _) => {
                let word = self.s.get(self.at..self.at + 2)?.to_ascii_uppercase();
                v.pm = Some(match word.as_slice() {
                    b"AM" => false,
                    b"PM" => true,
                    _ => return None,
                });
                self.at += 2;
            }
            ('h' | 'H', _) => v.hour = self.number(n, wide)?,
            ('m', _) => v.minute = self.number(n, wide)?,
            ('s', _) => v.second = self.number(n, wide)?,
            ('S', _) => {
                let start = self.at;
                self.digits(n)?;
                v.nanos = nanos(std::str::from_utf8(&self.s[start..self.at]).ok()?)?;
            }
            ('n', _) => v.nanos = self.number(1, 9)?,
            _ => v.offset = Some(self.pattern_offset()?),
        }
        Some(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ts(text: &str) -> Timestamp {
        Timestamp::parse(text).unwrap_or_else(|| panic!("{text}"))
    }

    #[test]
    fn ion_text_round_trips_at_every_precision() {
        for text in [
            "2007T",
            "2007-02T",
            "2007-02-23",
            "2007-02-23T12:14Z",
            "2007-02-23T12:14:33Z",
            "2007-02-23T12:14:33.079-08:00",
            "2017-01-01T01:00-00:00",
        ] {
            assert_eq!(ts(text).text(), text);
        }
        assert_eq!(ts("2007-02-23T").text(), "2007-02-23");
        for bad in [
            "2007",
            "2007-13T",
            "2007-02-30",
            "2007-02-23T12:14",
            "x",
            "2007T1",
            "0000T",
            "2007-02-23T25:00Z",
        ] {
            assert!(Timestamp::parse(bad).is_none(), "{bad}");
        }
    }

    #[test]
    fn date_add_follows_s3s_examples() {
        let add = |part, n, t: &str| ts(t).add(part, n).unwrap().text();
        assert_eq!(add(DatePart::Year, 5, "2010-01-01T"), "2015-01-01");
        assert_eq!(add(DatePart::Month, 1, "2010T"), "2010-02T");
        assert_eq!(add(DatePart::Month, 13, "2010T"), "2011-02T");
        assert_eq!(add(DatePart::Day, -1, "2017-01-10T"), "2017-01-09");
        assert_eq!(add(DatePart::Hour, 1, "2017T"), "2017-01-01T01:00-00:00");
        assert_eq!(
            add(DatePart::Hour, 1, "2017-01-02T03:04Z"),
            "2017-01-02T04:04Z"
        );
        assert_eq!(
            add(DatePart::Minute, 1, "2017-01-02T03:04:05.006Z"),
            "2017-01-02T03:05:05.006Z"
        );
        assert_eq!(
            add(DatePart::Second, 1, "2017-01-02T03:04:05.006Z"),
            "2017-01-02T03:04:06.006Z"
        );
        let err = ts("2010T").add(DatePart::Year, i64::MAX).unwrap_err();
        assert_eq!(err.code, "IntegerOverflow");
    }

    #[test]
    fn date_diff_counts_whole_parts() {
        let diff = |part, a: &str, b: &str| ts(a).diff(part, &ts(b)).unwrap();
        assert_eq!(diff(DatePart::Year, "2010-01-01T", "2011-01-01T"), 1);
        assert_eq!(diff(DatePart::Year, "2010T", "2010-05T"), 0);
        assert_eq!(diff(DatePart::Month, "2010T", "2011T"), 12);
        assert_eq!(diff(DatePart::Month, "2011T", "2010T"), -12);
        assert_eq!(
            diff(DatePart::Day, "2010-01-01T23:00Z", "2010-01-02T01:00Z"),
            0
        );
        assert_eq!(
            diff(
                DatePart::Hour,
                "2010-01-01T23:00Z",
                "2010-01-02T01:00+01:00"
            ),
            1
        );
    }

    #[test]
    fn extract_reads_local_fields_and_the_offset() {
        let t = ts("2017-01-02T03:04:05+07:08");
        assert_eq!(t.extract(DatePart::Hour), 3.0);
        assert_eq!(t.extract(DatePart::Minute), 4.0);
        assert_eq!(t.extract(DatePart::TimezoneHour), 7.0);
        assert_eq!(t.extract(DatePart::TimezoneMinute), 8.0);
        assert_eq!(ts("2010T").extract(DatePart::Month), 1.0);
    }

    #[test]
    fn to_string_follows_s3s_examples() {
        let f = |t: &str, p: &str| ts(t).format(p).unwrap();
        assert_eq!(f("1969-07-20T20:18Z", "MMMM d, y"), "July 20, 1969");
        assert_eq!(f("1969-07-20T20:18Z", "MMM d, yyyy"), "Jul 20, 1969");
        assert_eq!(f("1969-07-20T20:18Z", "M-d-yy"), "7-20-69");
        assert_eq!(f("1969-07-20T20:18Z", "MM-d-y"), "07-20-1969");
        assert_eq!(
            f("1969-07-20T20:18Z", "MMMM d, y h:m a"),
            "July 20, 1969 8:18 PM"
        );
        assert_eq!(
            f("1969-07-20T20:18Z", "y-MM-dd'T'H:m:ssX"),
            "1969-07-20T20:18:00Z"
        );
        assert_eq!(
            f("1969-07-20T20:18+08:00", "y-MM-dd'T'H:m:ssXXXX"),
            "1969-07-20T20:18:00+0800"
        );
        assert_eq!(
            f("1969-07-20T20:18+08:00", "y-MM-dd'T'H:m:ssXXXXX"),
            "1969-07-20T20:18:00+08:00"
        );
        assert_eq!(
            f("2017-01-02T03:04:05.006Z", "ss.SSS n ''"),
            "05.006 6000000 '"
        );
        let code = |p: &str| ts("2010T").format(p).unwrap_err().code;
        assert_eq!(
            code("yyyy-qq"),
            "EvaluatorInvalidTimestampFormatPatternSymbol"
        );
        assert_eq!(code("yyy"), "EvaluatorInvalidTimestampFormatPatternToken");
        assert_eq!(
            code("y 'T"),
            "EvaluatorUnterminatedTimestampFormatPatternToken"
        );
    }

    #[test]
    fn to_timestamp_with_a_pattern_checks_it_as_s3_does() {
        let p = |t: &str, p: &str| Timestamp::parse_with(t, p).map(|t| t.text());
        assert_eq!(p("07/20/1969", "MM/dd/y").unwrap(), "1969-07-20");
        assert_eq!(
            p("July 20, 1969 8:18 PM +0800", "MMMM d, y h:m a XX").unwrap(),
            "1969-07-20T20:18+08:00"
        );
        assert_eq!(
            p("1969-07-20 20:18:01.5", "y-MM-dd H:mm:ss.S").unwrap(),
            "1969-07-20T20:18:01.5-00:00"
        );
        let code = |t: &str, pat: &str| p(t, pat).unwrap_err().code;
        assert_eq!(
            code("J", "MMMMM"),
            "EvaluatorInvalidTimestampFormatPatternSymbolForParsing"
        );
        assert_eq!(
            code("1 1", "y y"),
            "EvaluatorTimestampFormatPatternDuplicateFields"
        );
        assert_eq!(
            code("2010 8", "y h"),
            "EvaluatorTimestampFormatPatternHourClockAmPmMismatch"
        );
        assert_eq!(
            code("2010 1", "y d"),
            "EvaluatorInvalidTimestampFormatPattern"
        );
        assert_eq!(code("20x0", "y"), "ValueParseFailure");
    }
}
