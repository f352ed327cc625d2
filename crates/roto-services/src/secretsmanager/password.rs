//! GetRandomPassword: passwords from the operating system's generator, drawn uniformly
//! from the character classes the request keeps, with one of each class when required.

use roto_core::{AwsResult, Value};

use super::invalid_parameter;
use crate::kms::crypto::random_bytes;

const PUNCTUATION: &str = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~";

/// A uniformly random index below `n` (rejection sampling over random bytes), `n` >= 1.
fn random_below(n: usize) -> usize {
    let n32 = u32::try_from(n).unwrap_or(u32::MAX);
    let zone = u32::MAX - u32::MAX % n32;
    loop {
        let b = random_bytes(4);
        let v = u32::from_be_bytes([b[0], b[1], b[2], b[3]]);
        if v < zone {
            return usize::try_from(v % n32).unwrap_or_default();
        }
    }
}

/// The password for a request.
pub(super) fn get_random_password(input: &Value) -> AwsResult<Value> {
    let length = usize::try_from(input.int("PasswordLength").unwrap_or(32)).unwrap_or(32);
    let excluded: Vec<char> = input
        .str("ExcludeCharacters")
        .unwrap_or_default()
        .chars()
        .collect();
    let flag = |name: &str| input.bool(name).unwrap_or(false);
    let mut classes: Vec<Vec<char>> = Vec::new();
    let mut keep = |skip: bool, chars: &str| {
        if !skip {
            let class: Vec<char> = chars.chars().filter(|c| !excluded.contains(c)).collect();
            if !class.is_empty() {
                classes.push(class);
            }
        }
    };
    keep(flag("ExcludeLowercase"), "abcdefghijklmnopqrstuvwxyz");
    keep(flag("ExcludeUppercase"), "ABCDEFGHIJKLMNOPQRSTUVWXYZ");
    keep(flag("ExcludeNumbers"), "0123456789");
    keep(flag("ExcludePunctuation"), PUNCTUATION);
    keep(!flag("IncludeSpace"), " ");
    if classes.is_empty() {
        return Err(invalid_parameter(
            "The password can't be generated: every character type is excluded.",
        ));
    }
    let require_each = input.bool("RequireEachIncludedType").unwrap_or(true);
    if require_each && length < classes.len() {
        return Err(invalid_parameter(format!(
            "The password length must be at least {} to include each character type.",
            classes.len()
        )));
    }
    let all: Vec<char> = classes.concat();
    let mut password: Vec<char> = if require_each {
        classes.iter().map(|c| c[random_below(c.len())]).collect()
    } else {
        Vec::new()
    };
    while password.len() < length {
        password.push(all[random_below(all.len())]);
    }
    for i in (1..password.len()).rev() {
        password.swap(i, random_below(i + 1));
    }
    Ok(Value::map().with("RandomPassword", password.into_iter().collect::<String>()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_have_the_length_and_each_kept_class() {
        let input = Value::map()
            .with("PasswordLength", 40i64)
            .with("ExcludeCharacters", "abc");
        for _ in 0..20 {
            let pw = get_random_password(&input).unwrap();
            let pw = pw.str("RandomPassword").unwrap();
            assert_eq!(pw.chars().count(), 40);
            assert!(!pw.contains(['a', 'b', 'c', ' ']));
            assert!(pw.chars().any(|c| c.is_ascii_lowercase()));
            assert!(pw.chars().any(|c| c.is_ascii_uppercase()));
            assert!(pw.chars().any(|c| c.is_ascii_digit()));
            assert!(pw.chars().any(|c| PUNCTUATION.contains(c)));
        }
    }

    #[test]
    fn excluding_every_class_is_an_invalid_parameter() {
        let input = Value::map()
            .with("ExcludeLowercase", true)
            .with("ExcludeUppercase", true)
            .with("ExcludeNumbers", true)
            .with("ExcludePunctuation", true);
        assert_eq!(
            get_random_password(&input).unwrap_err().code,
            "InvalidParameterException"
        );
    }
}
