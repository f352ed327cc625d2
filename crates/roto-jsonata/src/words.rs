//! English number words for `$formatInteger`/`$parseInteger` pictures `w`, `W` and `Ww`
//! (with `;o` for ordinals), worded as the reference implementation words them: "one
//! thousand, two hundred and thirty-four", "twenty-first", scales up to trillion.

const FEW: [&str; 20] = [
    "zero",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
    "thirteen",
    "fourteen",
    "fifteen",
    "sixteen",
    "seventeen",
    "eighteen",
    "nineteen",
];
const ORDINALS: [&str; 20] = [
    "zeroth",
    "first",
    "second",
    "third",
    "fourth",
    "fifth",
    "sixth",
    "seventh",
    "eighth",
    "ninth",
    "tenth",
    "eleventh",
    "twelfth",
    "thirteenth",
    "fourteenth",
    "fifteenth",
    "sixteenth",
    "seventeenth",
    "eighteenth",
    "nineteenth",
];
const DECADES: [&str; 8] = [
    "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety",
];
const MAGNITUDES: [&str; 4] = ["thousand", "million", "billion", "trillion"];

/// `n` in lowercase words; `ordinal` for "first", "twentieth"...
pub(crate) fn to_words(n: u64, ordinal: bool) -> String {
    lookup(n, false, ordinal)
}

fn lookup(num: u64, prev: bool, ord: bool) -> String {
    if num <= 19 {
        let word = if ord {
            ORDINALS[num as usize]
        } else {
            FEW[num as usize]
        };
        return format!("{}{word}", if prev { " and " } else { "" });
    }
    if num < 100 {
        let mut words = format!(
            "{}{}",
            if prev { " and " } else { "" },
            DECADES[(num / 10 - 2) as usize]
        );
        let remainder = num % 10;
        if remainder > 0 {
            words.push('-');
            words.push_str(&lookup(remainder, false, ord));
        } else if ord {
            words.pop();
            words.push_str("ieth");
        }
        return words;
    }
    let (mant, scale, factor) = if num < 1000 {
        (num / 100, "hundred", 100)
    } else {
        let mag = ((num as f64).log10() / 3.0)
            .floor()
            .min(MAGNITUDES.len() as f64) as u32;
        let factor = 10u64.pow(mag * 3);
        (num / factor, MAGNITUDES[mag as usize - 1], factor)
    };
    let remainder = num - mant * factor;
    let head = if factor == 100 {
        FEW[mant as usize].to_string()
    } else {
        lookup(mant, false, false)
    };
    let mut words = format!("{}{head} {scale}", if prev { ", " } else { "" });
    if remainder > 0 {
        words.push_str(&lookup(remainder, true, ord));
    } else if ord {
        words.push_str("th");
    }
    words
}

/// Cases words as the picture asks: `W` upper, `Ww` title, `w` lower.
pub(crate) fn case(words: &str, picture: &str) -> String {
    match picture {
        "W" => words.to_uppercase(),
        "Ww" => {
            let mut out = String::with_capacity(words.len());
            let mut start = true;
            for c in words.chars() {
                out.extend(if start {
                    c.to_uppercase().collect::<Vec<_>>()
                } else {
                    vec![c]
                });
                start = !c.is_alphabetic();
            }
            out
        }
        _ => words.to_string(),
    }
}

fn word_value(word: &str) -> Option<u64> {
    let index = |list: &[&str]| list.iter().position(|w| *w == word).map(|i| i as u64);
    if let Some(i) = index(&FEW).or_else(|| index(&ORDINALS)) {
        return Some(i);
    }
    let decade = |list: &[&str], ordinal: bool| {
        list.iter().position(|d| {
            if ordinal {
                word == format!("{}ieth", &d[..d.len() - 1])
            } else {
                word == *d
            }
        })
    };
    decade(&DECADES, false)
        .or_else(|| decade(&DECADES, true))
        .map(|i| (i as u64 + 2) * 10)
}

/// Reads words back into a number; `None` when a word is not a number word.
pub(crate) fn from_words(text: &str) -> Option<u64> {
    let lower = text.to_lowercase();
    let (mut total, mut current) = (0u64, 0u64);
    for word in lower.split(|c: char| c.is_whitespace() || c == ',' || c == '-') {
        let word = word.trim_end_matches("th");
        match word {
            "" | "and" => {}
            "hundred" => current = current.max(1).saturating_mul(100),
            _ => {
                if let Some(m) = MAGNITUDES.iter().position(|m| *m == word) {
                    let factor = 10u64.pow(3 * (m as u32 + 1));
                    total = total.saturating_add(current.max(1).saturating_mul(factor));
                    current = 0;
                } else {
                    let value = word_value(word).or_else(|| word_value(&format!("{word}th")))?;
                    current = current.saturating_add(value);
                }
            }
        }
    }
    Some(total.saturating_add(current))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_as_the_reference_writes_them() {
        assert_eq!(to_words(123, false), "one hundred and twenty-three");
        assert_eq!(to_words(1100, false), "one thousand, one hundred");
        assert_eq!(to_words(1001, false), "one thousand and one");
        assert_eq!(to_words(22, true), "twenty-second");
        assert_eq!(to_words(40, true), "fortieth");
        assert_eq!(to_words(100, true), "one hundredth");
        assert_eq!(
            to_words(1_000_000_000_000_000, false),
            "one thousand trillion"
        );
        assert_eq!(case("twenty-one", "Ww"), "Twenty-One");
    }

    #[test]
    fn words_read_back() {
        assert_eq!(from_words("one hundred and twenty-three"), Some(123));
        assert_eq!(
            from_words("ONE MILLION, TWO HUNDRED AND THIRTY-FOUR THOUSAND"),
            Some(1_234_000)
        );
        assert_eq!(from_words("twenty-second"), Some(22));
        assert_eq!(from_words("fortieth"), Some(40));
        assert_eq!(from_words("banana"), None);
    }
}
