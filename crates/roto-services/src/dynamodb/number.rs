//! DynamoDB numbers: exact decimals, never floats.
//!
//! A number attribute arrives as decimal text (`"01.50"`, `"-0"`, `"1E+2"`). DynamoDB keeps
//! up to 38 significant digits with a magnitude between 1E-130 and 1E+126, trims leading
//! and trailing zeros, and returns the plain decimal form (`"1.5"`, `"0"`, `"100"`). A
//! [`Number`] holds that normal form as sign, significant digits and exponent, so equality
//! is numeric equality, and [`Number::key_bytes`] gives an order-preserving byte encoding
//! (memcmp order == numeric order) for key columns that Query ranges over.

use std::fmt;

/// The most significant digits a number may carry.
const MAX_DIGITS: usize = 38;
/// The largest exponent: values stay below 10^126.
const MAX_EXPONENT: i64 = 126;
/// The smallest exponent: values stay at or above 10^-130 (0.1 * 10^-129).
const MIN_EXPONENT: i64 = -129;

/// Why a text is not a storable number, each with the message DynamoDB gives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NumberError {
    /// Not decimal text at all.
    NotANumber,
    /// 10^126 or more in magnitude.
    Overflow,
    /// Non-zero but below 10^-130 in magnitude.
    Underflow,
    /// More than 38 significant digits.
    TooPrecise,
}

impl NumberError {
    /// The `ValidationException` message DynamoDB returns for `text`.
    pub fn message(self, text: &str) -> String {
        match self {
            NumberError::NotANumber => {
                format!("The parameter cannot be converted to a numeric value: {text}")
            }
            other => other.limit_message().to_string(),
        }
    }

    fn limit_message(self) -> &'static str {
        match self {
            NumberError::NotANumber => "",
            NumberError::Overflow => {
                "Number overflow. Attempting to store a number with magnitude larger than supported range"
            }
            NumberError::Underflow => {
                "Number underflow. Attempting to store a number with magnitude smaller than supported range"
            }
            NumberError::TooPrecise => {
                "Attempting to store more than 38 significant digits in a Number"
            }
        }
    }
}

/// A number in normal form: `(-1)^negative * 0.d1d2...dn * 10^exponent`, with `d1 != 0`
/// and `dn != 0`; zero has no digits and is never negative.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Number {
    negative: bool,
    digits: Vec<u8>,
    exponent: i64,
}

impl Number {
    /// Parses and validates decimal text as DynamoDB does.
    pub fn parse(text: &str) -> Result<Number, NumberError> {
        let bytes = text.as_bytes();
        let mut i = 0;
        let mut negative = false;
        if let Some(&sign @ (b'+' | b'-')) = bytes.first() {
            negative = sign == b'-';
            i = 1;
        }
        let mut digits = Vec::new();
        let mut integer_len: i64 = 0;
        let mut seen_point = false;
        let mut any_digit = false;
        while let Some(&b) = bytes.get(i) {
            match b {
                b'0'..=b'9' => {
                    any_digit = true;
                    digits.push(b - b'0');
                    if !seen_point {
                        integer_len += 1;
                    }
                }
                b'.' if !seen_point => seen_point = true,
                _ => break,
            }
            i += 1;
        }
        if !any_digit {
            return Err(NumberError::NotANumber);
        }
        let mut exponent: i64 = 0;
        if let Some(b'e' | b'E') = bytes.get(i) {
            i += 1;
            let mut exp_negative = false;
            if let Some(&sign @ (b'+' | b'-')) = bytes.get(i) {
                exp_negative = sign == b'-';
                i += 1;
            }
            let start = i;
            while let Some(&b @ b'0'..=b'9') = bytes.get(i) {
                // An exponent past a 64-bit integer is not a number to DynamoDB.
                exponent = exponent
                    .checked_mul(10)
                    .and_then(|e| e.checked_add(i64::from(b - b'0')))
                    .ok_or(NumberError::NotANumber)?;
                i += 1;
            }
            if i == start {
                return Err(NumberError::NotANumber);
            }
            if exp_negative {
                exponent = -exponent;
            }
        }
        if i != bytes.len() {
            return Err(NumberError::NotANumber);
        }
        let leading = digits.iter().take_while(|&&d| d == 0).count();
        digits.drain(..leading);
        while digits.last() == Some(&0) {
            digits.pop();
        }
        // Zero is zero whatever exponent it is written with (DynamoDB stores `0e1000`).
        if digits.is_empty() {
            return Ok(Number::zero());
        }
        let exponent = i128::from(integer_len) - leading as i128 + i128::from(exponent);
        let exponent =
            i64::try_from(exponent).unwrap_or(if exponent > 0 { i64::MAX } else { i64::MIN });
        if exponent > MAX_EXPONENT {
            return Err(NumberError::Overflow);
        }
        if exponent < MIN_EXPONENT {
            return Err(NumberError::Underflow);
        }
        if digits.len() > MAX_DIGITS {
            return Err(NumberError::TooPrecise);
        }
        Ok(Number {
            negative,
            digits,
            exponent,
        })
    }

    fn zero() -> Number {
        Number {
            negative: false,
            digits: Vec::new(),
            exponent: 0,
        }
    }

    /// The bytes DynamoDB bills for this number: 1, plus half the significant digits on
    /// each side of the decimal point (each half rounded up), plus 1 if negative.
    pub fn size(&self) -> usize {
        let integer =
            usize::try_from(self.exponent.clamp(0, self.digits.len() as i64)).unwrap_or_default();
        let fraction = self.digits.len() - integer;
        1 + integer.div_ceil(2) + fraction.div_ceil(2) + usize::from(self.negative)
    }

    /// An order-preserving encoding: comparing encodings bytewise compares the numbers.
    ///
    /// Layout: a class byte (1 negative, 2 zero, 3 positive); for positives the exponent
    /// biased into one byte, then the digits; for negatives everything is complemented so
    /// larger magnitudes sort first, and a terminator above every complemented digit makes
    /// a shorter digit string (a smaller magnitude) sort after its extensions.
    pub fn key_bytes(&self) -> Vec<u8> {
        if self.digits.is_empty() {
            return vec![2];
        }
        // MIN_EXPONENT..=MAX_EXPONENT maps onto 0..=255.
        let biased = u8::try_from(self.exponent - MIN_EXPONENT).unwrap_or(u8::MAX);
        let mut out = Vec::with_capacity(self.digits.len() + 3);
        if self.negative {
            out.push(1);
            out.push(u8::MAX - biased);
            out.extend(self.digits.iter().map(|d| 9 - d));
            out.push(10);
        } else {
            out.push(3);
            out.push(biased);
            out.extend_from_slice(&self.digits);
        }
        out
    }
}

impl Number {
    /// The exact sum, refused as DynamoDB refuses a result it cannot store.
    pub fn add(&self, other: &Number) -> Result<Number, NumberError> {
        let scale = self.scale().min(other.scale());
        let (a, b) = (self.magnitude_at(scale), other.magnitude_at(scale));
        let width = a.len().max(b.len());
        let (a, b) = (pad_left(a, width), pad_left(b, width));
        let (negative, digits) = if self.is_negative() == other.is_negative() {
            (self.is_negative(), digit_sum(&a, &b))
        } else if a >= b {
            (self.is_negative(), digit_difference(&a, &b))
        } else {
            (other.is_negative(), digit_difference(&b, &a))
        };
        let text: String = digits.iter().map(|d| char::from(b'0' + d)).collect();
        let sign = if negative { "-" } else { "" };
        Number::parse(&format!("{sign}{text}E{scale}"))
    }

    /// A whole number (a count).
    pub fn from_usize(n: usize) -> Number {
        Number::parse(&n.to_string()).unwrap_or_else(|_| Number::zero())
    }

    /// The exact difference `self - other`.
    pub fn sub(&self, other: &Number) -> Result<Number, NumberError> {
        self.add(&other.negated())
    }

    fn negated(&self) -> Number {
        Number {
            negative: !self.negative && !self.digits.is_empty(),
            ..self.clone()
        }
    }

    fn is_negative(&self) -> bool {
        self.negative
    }

    /// The power of ten of the last significant digit.
    fn scale(&self) -> i64 {
        self.exponent - self.digits.len() as i64
    }

    /// The digits as an integer counted in units of `10^scale` (`scale <= self.scale()`).
    fn magnitude_at(&self, scale: i64) -> Vec<u8> {
        let mut out = self.digits.clone();
        let zeros = usize::try_from(self.scale() - scale).unwrap_or_default();
        out.extend(std::iter::repeat_n(0, zeros));
        out
    }
}

fn pad_left(digits: Vec<u8>, width: usize) -> Vec<u8> {
    let mut out = vec![0; width - digits.len()];
    out.extend(digits);
    out
}

/// The sum of two equally long digit strings (most significant first).
fn digit_sum(a: &[u8], b: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(a.len() + 1);
    let mut carry = 0;
    for (x, y) in a.iter().rev().zip(b.iter().rev()) {
        let d = x + y + carry;
        out.push(d % 10);
        carry = d / 10;
    }
    out.push(carry);
    out.reverse();
    out
}

/// `a - b` for equally long digit strings with `a >= b`.
fn digit_difference(a: &[u8], b: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(a.len());
    let mut borrow = 0;
    for (x, y) in a.iter().rev().zip(b.iter().rev()) {
        let (d, next) = if *x >= y + borrow {
            (x - y - borrow, 0)
        } else {
            (x + 10 - y - borrow, 1)
        };
        out.push(d);
        borrow = next;
    }
    out.reverse();
    out
}

impl Ord for Number {
    /// Numeric order.
    fn cmp(&self, other: &Number) -> std::cmp::Ordering {
        let sign = |n: &Number| match (n.digits.is_empty(), n.negative) {
            (true, _) => 0,
            (false, true) => -1,
            (false, false) => 1,
        };
        let (sa, sb) = (sign(self), sign(other));
        if sa != sb || sa == 0 {
            return sa.cmp(&sb);
        }
        // Digit strings compare like fractions once the exponents agree.
        let magnitude = self
            .exponent
            .cmp(&other.exponent)
            .then_with(|| self.digits.cmp(&other.digits));
        if sa < 0 {
            magnitude.reverse()
        } else {
            magnitude
        }
    }
}

impl PartialOrd for Number {
    fn partial_cmp(&self, other: &Number) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl fmt::Display for Number {
    /// The plain decimal form DynamoDB returns (`1.5`, `100`, `0.001`, `-7`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.digits.is_empty() {
            return f.write_str("0");
        }
        let digit = |d: &u8| char::from(b'0' + d);
        let mut out = String::with_capacity(self.digits.len() + 8);
        if self.negative {
            out.push('-');
        }
        let len = self.digits.len() as i64;
        if self.exponent <= 0 {
            out.push_str("0.");
            out.extend(std::iter::repeat_n('0', (-self.exponent) as usize));
            out.extend(self.digits.iter().map(digit));
        } else if self.exponent < len {
            let (int, frac) = self.digits.split_at(self.exponent as usize);
            out.extend(int.iter().map(digit));
            out.push('.');
            out.extend(frac.iter().map(digit));
        } else {
            out.extend(self.digits.iter().map(digit));
            out.extend(std::iter::repeat_n('0', (self.exponent - len) as usize));
        }
        f.write_str(&out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn normal(text: &str) -> String {
        Number::parse(text).unwrap().to_string()
    }

    #[test]
    fn numbers_normalise_to_plain_decimal_text() {
        for (input, expected) in [
            ("01.50", "1.5"),
            ("-0", "0"),
            ("+0.000", "0"),
            ("1E+2", "100"),
            ("1e2", "100"),
            ("12.5E-3", "0.0125"),
            (".5", "0.5"),
            ("5.", "5"),
            ("-007.0700", "-7.07"),
            (
                "123456789012345678901234567890.5",
                "123456789012345678901234567890.5",
            ),
            ("1000", "1000"),
            ("0.1E1", "1"),
        ] {
            assert_eq!(normal(input), expected, "{input}");
        }
    }

    #[test]
    fn magnitude_and_precision_limits_are_enforced() {
        assert_eq!(normal("1E-130"), format!("0.{}1", "0".repeat(129)));
        assert_eq!(normal("9.9E+125").len(), 126);
        assert_eq!(Number::parse("1E+126"), Err(NumberError::Overflow));
        assert_eq!(Number::parse("-1E+126"), Err(NumberError::Overflow));
        assert_eq!(Number::parse("1E-131"), Err(NumberError::Underflow));
        assert_eq!(Number::parse("9E-131"), Err(NumberError::Underflow));
        assert_eq!(Number::parse("0e125"), Ok(Number::zero()));
        assert_eq!(Number::parse("0e126"), Ok(Number::zero()));
        assert_eq!(Number::parse("0e1000"), Ok(Number::zero()));
        assert_eq!(Number::parse("-0.0e-131"), Ok(Number::zero()));
        assert_eq!(Number::parse("1e99999999999"), Err(NumberError::Overflow));
        assert_eq!(Number::parse("1e-99999999999"), Err(NumberError::Underflow));
        assert_eq!(
            Number::parse("1e9223372036854775808"),
            Err(NumberError::NotANumber)
        );
        let digits38 = "1".repeat(38);
        assert!(Number::parse(&digits38).is_ok());
        assert_eq!(Number::parse(&"1".repeat(39)), Err(NumberError::TooPrecise));
        // Trailing zeros are not significant.
        assert!(Number::parse(&format!("{digits38}000")).is_ok());
    }

    #[test]
    fn sizes_count_digit_pairs_on_each_side_of_the_point() {
        let size = |t: &str| Number::parse(t).unwrap().size();
        assert_eq!(size("0"), 1);
        assert_eq!(size("1"), 2);
        assert_eq!(size("1E125"), 2);
        assert_eq!(size("123456"), 4);
        assert_eq!(size("3.14159"), 5);
        assert_eq!(size("0042.1200"), 3);
        assert_eq!(size("-1"), 3);
        assert_eq!(size("0.001"), 2);
    }

    #[test]
    fn malformed_text_is_not_a_number() {
        for bad in [
            "", "-", "+", ".", "abc", "1.2.3", "1e", "1e+", " 1", "1 ", "0x10", "NaN", "Infinity",
            "1,5", "--1",
        ] {
            assert_eq!(Number::parse(bad), Err(NumberError::NotANumber), "{bad:?}");
        }
    }

    /// A random decimal text (with sign, leading zeros, point and exponent variations).
    fn random_text() -> String {
        let mut s = String::new();
        match fastrand::u8(..3) {
            0 => s.push('-'),
            1 => s.push('+'),
            _ => {}
        }
        for _ in 0..fastrand::usize(1..12) {
            s.push(char::from(b'0' + fastrand::u8(..10)));
        }
        if fastrand::bool() {
            s.push('.');
            for _ in 0..fastrand::usize(1..12) {
                s.push(char::from(b'0' + fastrand::u8(..10)));
            }
        }
        if fastrand::u8(..4) == 0 {
            s.push_str(&format!("E{}", fastrand::i32(-60..60)));
        }
        s
    }

    #[test]
    fn key_encoding_order_matches_numeric_order() {
        fastrand::seed(7);
        for _ in 0..20_000 {
            let (ta, tb) = (random_text(), random_text());
            let (Ok(a), Ok(b)) = (Number::parse(&ta), Number::parse(&tb)) else {
                continue;
            };
            assert_eq!(a.key_bytes().cmp(&b.key_bytes()), a.cmp(&b), "{ta} vs {tb}");
        }
    }

    #[test]
    fn key_encoding_orders_known_values_and_equal_numbers_encode_equally() {
        let ordered = [
            "-9.9E+125",
            "-1000",
            "-100.5",
            "-100",
            "-1.25",
            "-1.2",
            "-1",
            "-0.5",
            "-1E-130",
            "0",
            "1E-130",
            "0.5",
            "1",
            "1.2",
            "1.25",
            "100",
            "100.5",
            "1000",
            "9.9E+125",
        ];
        let keys: Vec<Vec<u8>> = ordered
            .iter()
            .map(|t| Number::parse(t).unwrap().key_bytes())
            .collect();
        for pair in keys.windows(2) {
            assert!(pair[0] < pair[1], "{pair:?}");
        }
        assert_eq!(
            Number::parse("1.50").unwrap().key_bytes(),
            Number::parse("15E-1").unwrap().key_bytes()
        );
    }

    #[test]
    fn sums_and_differences_are_exact() {
        let n = |t: &str| Number::parse(t).unwrap();
        let sum = |a: &str, b: &str| n(a).add(&n(b)).map(|r| r.to_string());
        assert_eq!(sum("0.1", "0.2"), Ok("0.3".into()));
        assert_eq!(sum("1", "-1"), Ok("0".into()));
        assert_eq!(sum("-5", "3"), Ok("-2".into()));
        assert_eq!(sum("99.99", "0.01"), Ok("100".into()));
        assert_eq!(
            sum("1E+20", "-1E-5"),
            Ok("99999999999999999999.99999".into())
        );
        let big = "9".repeat(38);
        assert_eq!(sum(&big, "1"), Ok(format!("1{}", "0".repeat(38))));
        assert_eq!(sum(&big, "0.1"), Err(NumberError::TooPrecise));
        assert_eq!(sum("9.9E+125", "9.9E+125"), Err(NumberError::Overflow));
        assert_eq!(
            n("10").sub(&n("12.5")).map(|r| r.to_string()),
            Ok("-2.5".into())
        );
        // Random sums agree with i128 arithmetic.
        fastrand::seed(11);
        for _ in 0..5_000 {
            let (a, b) = (fastrand::i64(..) / 4, fastrand::i64(..) / 4);
            let got = n(&a.to_string()).add(&n(&b.to_string())).unwrap();
            assert_eq!(got.to_string(), (i128::from(a) + i128::from(b)).to_string());
            assert_eq!(n(&a.to_string()).cmp(&n(&b.to_string())), a.cmp(&b));
        }
    }
}
