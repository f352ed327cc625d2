//! Step Functions' own JSONata functions, the JSONata counterparts of its intrinsics:
//! `$partition(array, size)`, `$range(start, end, step)`, `$hash(value, algorithm)`,
//! `$random([seed])`, `$uuid()` and `$parse(jsonString)`. They are bound only by
//! `Environment::with_step_functions`; `$random` then takes the optional seed.

use md5::Md5;
use sha1::Sha1;
use sha2::{Digest, Sha256, Sha384, Sha512};

use crate::error::Error;
use crate::eval::Evaluator;
use crate::functions::{arg, num_arg, str_arg, Builtin};
use crate::value::{from_json, V};

type Res = Result<Option<V>, Error>;
type Args = Vec<Option<V>>;

/// The most items `$range` returns, as `States.ArrayRange` allows.
const MAX_RANGE_ITEMS: f64 = 1000.0;

/// Step Functions' functions.
pub(crate) static FUNCTIONS: &[Builtin] = &[
    Builtin {
        name: "partition",
        sig: "<an:a>",
        arity: 2,
        f: partition,
    },
    Builtin {
        name: "range",
        sig: "<nnn?:a>",
        arity: 3,
        f: range,
    },
    Builtin {
        name: "hash",
        sig: "<ss:s>",
        arity: 2,
        f: hash,
    },
    Builtin {
        name: "random",
        sig: "<n?:n>",
        arity: 1,
        f: random,
    },
    Builtin {
        name: "uuid",
        sig: "<:s>",
        arity: 0,
        f: uuid,
    },
    Builtin {
        name: "parse",
        sig: "<s-:x>",
        arity: 1,
        f: parse,
    },
];

fn invalid(function: &str, why: &str) -> Error {
    Error::with_message("D3137", format!("Invalid arguments to ${function}: {why}")).token(function)
}

fn partition(_: &mut Evaluator, a: Args, _: Option<&V>) -> Res {
    let Some(array) = arg(&a, 0) else {
        return Ok(None);
    };
    let size = num_arg(&a, 1).unwrap_or(0.0);
    if size < 1.0 || size.fract() != 0.0 {
        return Err(invalid(
            "partition",
            "the chunk size must be a positive integer",
        ));
    }
    let items = array.items();
    let chunks = items
        .chunks(size as usize)
        .map(|c| V::array(c.to_vec()))
        .collect();
    Ok(Some(V::array(chunks)))
}

fn range(ev: &mut Evaluator, a: Args, _: Option<&V>) -> Res {
    let (Some(start), Some(end)) = (num_arg(&a, 0), num_arg(&a, 1)) else {
        return Ok(None);
    };
    let step = num_arg(&a, 2).unwrap_or(1.0);
    if step == 0.0 {
        return Err(invalid("range", "the step must not be zero"));
    }
    let count = ((end - start) / step).floor() + 1.0;
    if count > MAX_RANGE_ITEMS {
        return Err(invalid(
            "range",
            "the range must not contain more than 1000 items",
        ));
    }
    ev.charge(count.max(0.0) as u64)?;
    let items = (0..count.max(0.0) as usize)
        .map(|i| V::Num(start + step * i as f64))
        .collect();
    Ok(Some(V::array(items)))
}

fn hex_digest<D: Digest>(data: &[u8]) -> String {
    hex_of(&D::digest(data))
}

fn hex_of(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn hash(_: &mut Evaluator, a: Args, _: Option<&V>) -> Res {
    let Some(value) = str_arg(&a, 0) else {
        return Ok(None);
    };
    let data = value.as_bytes();
    let digest = match str_arg(&a, 1).unwrap_or("") {
        "MD5" => hex_digest::<Md5>(data),
        "SHA-1" => hex_digest::<Sha1>(data),
        "SHA-256" => hex_digest::<Sha256>(data),
        "SHA-384" => hex_digest::<Sha384>(data),
        "SHA-512" => hex_digest::<Sha512>(data),
        _ => {
            return Err(invalid(
                "hash",
                "the algorithm must be one of MD5, SHA-1, SHA-256, SHA-384, SHA-512",
            ))
        }
    };
    Ok(Some(V::string(digest)))
}

fn random(_: &mut Evaluator, a: Args, _: Option<&V>) -> Res {
    let n = match num_arg(&a, 0) {
        Some(seed) => fastrand::Rng::with_seed(seed.to_bits()).f64(),
        None => fastrand::f64(),
    };
    Ok(Some(V::Num(n)))
}

fn uuid(_: &mut Evaluator, _: Args, _: Option<&V>) -> Res {
    let mut bytes: [u8; 16] = fastrand::u128(..).to_be_bytes();
    bytes[6] = (bytes[6] & 0x0f) | 0x40;
    bytes[8] = (bytes[8] & 0x3f) | 0x80;
    let h = hex_of(&bytes);
    let text = format!(
        "{}-{}-{}-{}-{}",
        &h[..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..]
    );
    Ok(Some(V::string(text)))
}

fn parse(_: &mut Evaluator, a: Args, _: Option<&V>) -> Res {
    let Some(text) = str_arg(&a, 0) else {
        return Ok(None);
    };
    let value: serde_json::Value = serde_json::from_str(text)
        .map_err(|e| invalid("parse", &format!("the string is not valid JSON ({e})")))?;
    Ok(Some(from_json(&value)))
}

#[cfg(test)]
mod tests {
    use serde_json::{json, Value};

    use crate::{Environment, Expression};

    fn eval(text: &str) -> Result<Option<Value>, String> {
        let env = Environment::with_step_functions();
        Expression::parse(text)
            .and_then(|e| e.evaluate(&json!({"seed": 7, "doc": "{\"a\": [1, 2]}"}), &env))
            .map_err(|e| e.code().to_string())
    }

    #[test]
    fn partition_chunks_with_a_short_last_chunk() {
        assert_eq!(
            eval("$partition([1, 2, 3, 4, 5], 2)"),
            Ok(Some(json!([[1, 2], [3, 4], [5]])))
        );
        assert_eq!(eval("$partition([], 2)"), Ok(Some(json!([]))));
        assert!(eval("$partition([1], 0)").is_err());
    }

    #[test]
    fn range_includes_its_end_and_steps_either_way() {
        assert_eq!(
            eval("$range(0, 10, 2)"),
            Ok(Some(json!([0, 2, 4, 6, 8, 10])))
        );
        assert_eq!(eval("$range(5, 1, -2)"), Ok(Some(json!([5, 3, 1]))));
        assert_eq!(eval("$range(1, 0, 1)"), Ok(Some(json!([]))));
        assert!(eval("$range(0, 5000, 1)").is_err());
        assert!(eval("$range(0, 5, 0)").is_err());
    }

    #[test]
    fn hash_gives_lowercase_hex_digests() {
        assert_eq!(
            eval("$hash('abc', 'MD5')"),
            Ok(Some(json!("900150983cd24fb0d6963f7d28e17f72")))
        );
        assert_eq!(
            eval("$hash('abc', 'SHA-1')"),
            Ok(Some(json!("a9993e364706816aba3e25717850c26c9cd0d89d")))
        );
        assert!(eval("$hash('abc', 'SHA-3')").is_err());
    }

    #[test]
    fn random_with_a_seed_repeats_and_without_varies_in_range() {
        let a = eval("$random(seed)");
        assert_eq!(a, eval("$random(seed)"));
        let n = eval("$random()")
            .ok()
            .flatten()
            .and_then(|v| v.as_f64())
            .unwrap_or(-1.0);
        assert!((0.0..1.0).contains(&n));
    }

    #[test]
    fn uuid_is_version_4() {
        let Ok(Some(Value::String(id))) = eval("$uuid()") else {
            panic!("a string");
        };
        assert_eq!(id.len(), 36);
        assert_eq!(&id[14..15], "4");
        assert!(matches!(&id[19..20], "8" | "9" | "a" | "b"));
    }

    #[test]
    fn parse_reads_json_text() {
        assert_eq!(eval("$parse(doc).a[1]"), Ok(Some(json!(2))));
        assert!(eval("$parse('{nope')").is_err());
    }

    #[test]
    fn core_random_keeps_its_signature_without_step_functions() {
        let plain = Expression::parse("$random(1)")
            .and_then(|e| e.evaluate(&json!({}), &Environment::new()))
            .map_err(|e| e.code().to_string());
        assert_eq!(plain, Err("T0410".into()));
    }
}
