//! JSONata's function library: each built-in with the reference implementation's signature
//! (validated before the call, so context substitution and T0410 errors match) and its
//! JavaScript arity (what higher-order functions pass to it).

use std::collections::HashMap;
use std::rc::Rc;
use std::sync::OnceLock;

use indexmap::IndexMap;

use crate::error::Error;
use crate::eval::{js_cmp, merge_sort, Evaluator, Fun};
use crate::regex::Pattern;
use crate::signature::Signature;
use crate::value::{boolean, deep_equal, format_number, stringify, Arr, V};

type Res = Result<Option<V>, Error>;
type Args = Vec<Option<V>>;

/// A built-in function.
pub(crate) struct Builtin {
    pub name: &'static str,
    pub sig: &'static str,
    pub arity: usize,
    pub f: fn(&mut Evaluator, Args, Option<&V>) -> Res,
}

macro_rules! builtin {
    ($name:literal, $sig:literal, $arity:literal, $f:expr) => {
        Builtin {
            name: $name,
            sig: $sig,
            arity: $arity,
            f: $f,
        }
    };
}

/// The core library.
pub(crate) static CORE: &[Builtin] = &[
    builtin!("sum", "<a<n>:n>", 1, |_, a, _| aggregate(a, Agg::Sum)),
    builtin!("count", "<a:n>", 1, |_, a, _| Ok(Some(V::Num(
        arg(&a, 0).map_or(0, |v| v.items().len()) as f64
    )))),
    builtin!("max", "<a<n>:n>", 1, |_, a, _| aggregate(a, Agg::Max)),
    builtin!("min", "<a<n>:n>", 1, |_, a, _| aggregate(a, Agg::Min)),
    builtin!("average", "<a<n>:n>", 1, |_, a, _| aggregate(
        a,
        Agg::Average
    )),
    builtin!("string", "<x-b?:s>", 1, |_, a, _| string_fn(a)),
    builtin!("substring", "<s-nn?:s>", 3, |_, a, _| substring(a)),
    builtin!("substringBefore", "<s-s:s>", 2, |_, a, _| substring_around(
        a, true
    )),
    builtin!("substringAfter", "<s-s:s>", 2, |_, a, _| substring_around(
        a, false
    )),
    builtin!("lowercase", "<s-:s>", 1, |_, a, _| map_str(a, |s| s
        .to_lowercase())),
    builtin!("uppercase", "<s-:s>", 1, |_, a, _| map_str(a, |s| s
        .to_uppercase())),
    builtin!("length", "<s-:n>", 1, |_, a, _| Ok(
        str_arg(&a, 0).map(|s| V::Num(s.chars().count() as f64))
    )),
    builtin!("trim", "<s-:s>", 1, |_, a, _| map_str(a, trim)),
    builtin!("pad", "<s-ns?:s>", 3, pad),
    builtin!("match", "<s-f<s:o>n?:a<o>>", 3, match_fn),
    builtin!("contains", "<s-(sf):b>", 2, |_, a, _| contains(a)),
    builtin!("replace", "<s-(sf)(sf)n?:s>", 4, replace),
    builtin!("split", "<s-(sf)n?:a<s>>", 3, |_, a, _| split(a)),
    builtin!("join", "<a<s>s?:s>", 2, |_, a, _| join(a)),
    builtin!("formatNumber", "<n-so?:s>", 3, |_, a, _| {
        crate::format::format_number_fn(a)
    }),
    builtin!("formatBase", "<n-n?:s>", 2, |_, a, _| {
        crate::format::format_base(a)
    }),
    builtin!("formatInteger", "<n-s:s>", 2, |_, a, _| {
        crate::format::format_integer_fn(a)
    }),
    builtin!("parseInteger", "<s-s:n>", 2, |_, a, _| {
        crate::format::parse_integer_fn(a)
    }),
    builtin!("number", "<(nsb)-:n>", 1, |_, a, _| number(a)),
    builtin!("floor", "<n-:n>", 1, |_, a, _| map_num(a, f64::floor)),
    builtin!("ceil", "<n-:n>", 1, |_, a, _| map_num(a, f64::ceil)),
    builtin!("round", "<n-n?:n>", 2, |_, a, _| Ok(
        num_arg(&a, 0).map(|n| V::Num(round(n, num_arg(&a, 1).unwrap_or(0.0))))
    )),
    builtin!("abs", "<n-:n>", 1, |_, a, _| map_num(a, f64::abs)),
    builtin!("sqrt", "<n-:n>", 1, |_, a, _| sqrt(a)),
    builtin!("power", "<n-n:n>", 2, |_, a, _| power(a)),
    builtin!("random", "<:n>", 0, |_, _, _| Ok(Some(V::Num(
        fastrand::f64()
    )))),
    builtin!("boolean", "<x-:b>", 1, |_, a, _| Ok(
        arg(&a, 0).map(|v| V::Bool(bool_of(v)))
    )),
    builtin!("not", "<x-:b>", 1, |_, a, _| Ok(
        arg(&a, 0).map(|v| V::Bool(!bool_of(v)))
    )),
    builtin!("map", "<af>", 2, map_fn),
    builtin!("zip", "<a+>", 0, |_, a, _| zip(a)),
    builtin!("filter", "<af>", 2, filter_fn),
    builtin!("single", "<af?>", 2, single),
    builtin!("reduce", "<afj?:j>", 3, reduce),
    builtin!("sift", "<o-f?:o>", 2, sift),
    builtin!("keys", "<x-:a<s>>", 1, |_, a, _| Ok(Some(V::seq(keys(
        arg(&a, 0)
    ))))),
    builtin!("lookup", "<x-s:x>", 2, |_, a, _| Ok(
        crate::eval::lookup_field(arg(&a, 0), str_arg(&a, 1).unwrap_or_default())
    )),
    builtin!("append", "<xx:a>", 2, |_, mut a, _| {
        let second = a.get_mut(1).and_then(Option::take);
        Ok(append(a.first_mut().and_then(Option::take), second))
    }),
    builtin!("exists", "<x:b>", 1, |_, a, _| Ok(Some(V::Bool(
        arg(&a, 0).is_some()
    )))),
    builtin!("spread", "<x-:a<o>>", 1, |_, a, _| Ok(
        arg(&a, 0).map(spread)
    )),
    builtin!("merge", "<a<o>:o>", 1, |_, a, _| Ok(arg(&a, 0).map(merge))),
    builtin!("reverse", "<a:a>", 1, |_, a, _| Ok(arg(&a, 0).map(reverse))),
    builtin!("each", "<o-f:a>", 2, each),
    builtin!("error", "<s?:x>", 1, |_, a, _| Err(Error::with_message(
        "D3137",
        str_arg(&a, 0).unwrap_or("$error() function evaluated")
    ))),
    builtin!("assert", "<bs?:x>", 2, |_, a, _| assert(a)),
    builtin!("type", "<x:s>", 1, |_, a, _| Ok(
        arg(&a, 0).map(|v| V::str(v.type_name()))
    )),
    builtin!("sort", "<af?:a>", 2, sort),
    builtin!("shuffle", "<a:a>", 1, |_, a, _| Ok(arg(&a, 0).map(shuffle))),
    builtin!("distinct", "<x:x>", 1, |_, a, _| Ok(
        arg(&a, 0).map(distinct)
    )),
    builtin!("base64encode", "<s-:s>", 1, |_, a, _| {
        crate::format::base64_encode(a)
    }),
    builtin!("base64decode", "<s-:s>", 1, |_, a, _| {
        crate::format::base64_decode(a)
    }),
    builtin!("encodeUrlComponent", "<s-:s>", 1, |_, a, _| {
        crate::format::encode_url(a, "encodeUrlComponent", true)
    }),
    builtin!("encodeUrl", "<s-:s>", 1, |_, a, _| {
        crate::format::encode_url(a, "encodeUrl", false)
    }),
    builtin!("decodeUrlComponent", "<s-:s>", 1, |_, a, _| {
        crate::format::decode_url(a, "decodeUrlComponent", true)
    }),
    builtin!("decodeUrl", "<s-:s>", 1, |_, a, _| {
        crate::format::decode_url(a, "decodeUrl", false)
    }),
    builtin!("eval", "<sx?:x>", 2, eval_fn),
    builtin!("toMillis", "<s-s?:n>", 2, |ev, a, _| {
        crate::datetime::to_millis(a, ev.now_millis)
    }),
    builtin!("fromMillis", "<n-s?s?:s>", 3, |_, a, _| {
        crate::datetime::from_millis(a)
    }),
    builtin!("now", "<s?s?:s>", 2, |ev, mut a, _| {
        a.insert(0, Some(V::Num(ev.now_millis)));
        crate::datetime::from_millis(a)
    }),
    builtin!("millis", "<:n>", 0, |ev, _, _| Ok(Some(V::Num(
        ev.now_millis
    )))),
    builtin!("clone", "<(oa)-:o>", 1, |_, a, _| Ok(arg(&a, 0).cloned())),
];

/// Finds a built-in by name; Step Functions' own functions first when they are bound.
pub(crate) fn lookup(name: &str, step_functions: bool) -> Option<&'static Builtin> {
    if step_functions {
        if let Some(b) = crate::stepfunctions::FUNCTIONS
            .iter()
            .find(|b| b.name == name)
        {
            return Some(b);
        }
    }
    CORE.iter().find(|b| b.name == name)
}

/// The parsed signature of a built-in.
pub(crate) fn signature(b: &Builtin) -> Result<&'static Signature, Error> {
    static SIGNATURES: OnceLock<HashMap<&'static str, Signature>> = OnceLock::new();
    let table = SIGNATURES.get_or_init(|| {
        CORE.iter()
            .chain(crate::stepfunctions::FUNCTIONS)
            .filter_map(|b| Signature::parse(b.sig).ok().map(|s| (b.sig, s)))
            .collect()
    });
    table.get(b.sig).ok_or_else(|| Error::new("S0401"))
}

pub(crate) fn arg(args: &[Option<V>], i: usize) -> Option<&V> {
    args.get(i).and_then(Option::as_ref)
}

pub(crate) fn str_arg(args: &[Option<V>], i: usize) -> Option<&str> {
    arg(args, i).and_then(V::as_str)
}

pub(crate) fn num_arg(args: &[Option<V>], i: usize) -> Option<f64> {
    arg(args, i).and_then(V::as_num)
}

fn bool_of(v: &V) -> bool {
    boolean(v)
}

/// `$string` of a defined value.
pub(crate) fn string_of(v: &V) -> Result<String, Error> {
    match v {
        V::Str(s) => Ok(s.to_string()),
        V::Fun(_) => Ok(String::new()),
        V::Num(n) if !n.is_finite() => Err(Error::new("D3001").value(format_number(*n))),
        V::Arr(a) if a.outer && !a.items.is_empty() => stringify(&a.items[0], false),
        other => stringify(other, false),
    }
}

fn string_fn(a: Args) -> Res {
    let Some(v) = arg(&a, 0) else { return Ok(None) };
    let pretty = matches!(arg(&a, 1), Some(V::Bool(true)));
    let s = match v {
        V::Str(_) | V::Fun(_) => string_of(v)?,
        V::Num(n) if !n.is_finite() => return Err(Error::new("D3001")),
        other => stringify(other, pretty)?,
    };
    Ok(Some(V::string(s)))
}

enum Agg {
    Sum,
    Max,
    Min,
    Average,
}

fn aggregate(a: Args, agg: Agg) -> Res {
    let Some(v) = arg(&a, 0) else { return Ok(None) };
    let nums: Vec<f64> = v.items().iter().filter_map(V::as_num).collect();
    if nums.is_empty() && !matches!(agg, Agg::Sum) {
        return Ok(None);
    }
    let n = match agg {
        Agg::Sum => nums.iter().sum(),
        Agg::Max => nums.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        Agg::Min => nums.iter().copied().fold(f64::INFINITY, f64::min),
        Agg::Average => nums.iter().sum::<f64>() / nums.len() as f64,
    };
    Ok(Some(V::Num(n)))
}

fn map_str(a: Args, f: impl Fn(&str) -> String) -> Res {
    Ok(str_arg(&a, 0).map(|s| V::string(f(s))))
}

fn map_num(a: Args, f: impl Fn(f64) -> f64) -> Res {
    Ok(num_arg(&a, 0).map(|n| V::Num(f(n))))
}

fn trim(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut in_space = false;
    for c in s.chars() {
        if matches!(c, ' ' | '\t' | '\n' | '\r') {
            if !in_space {
                out.push(' ');
            }
            in_space = true;
        } else {
            out.push(c);
            in_space = false;
        }
    }
    let out = out.strip_prefix(' ').unwrap_or(&out);
    out.strip_suffix(' ').unwrap_or(out).to_string()
}

/// JavaScript's `Array.prototype.slice` bounds over a length.
fn slice_bounds(len: usize, start: f64, end: Option<f64>) -> (usize, usize) {
    let len_f = len as f64;
    let clamp = |x: f64| {
        let x = x.trunc();
        if x < 0.0 {
            (len_f + x).max(0.0)
        } else {
            x.min(len_f)
        }
    };
    let s = clamp(start);
    let e = end.map_or(len_f, clamp);
    (s as usize, (e.max(s)) as usize)
}

fn substring(a: Args) -> Res {
    let Some(s) = str_arg(&a, 0) else {
        return Ok(None);
    };
    let chars: Vec<char> = s.chars().collect();
    let len = chars.len() as f64;
    let mut start = num_arg(&a, 1).unwrap_or(0.0);
    if len + start < 0.0 {
        start = 0.0;
    }
    let end = match num_arg(&a, 2) {
        Some(length) if length <= 0.0 => return Ok(Some(V::str(""))),
        Some(length) => Some(if start >= 0.0 {
            start + length
        } else {
            len + start + length
        }),
        None => None,
    };
    let (from, to) = slice_bounds(chars.len(), start, end);
    Ok(Some(V::string(chars[from..to].iter().collect())))
}

fn substring_around(a: Args, before: bool) -> Res {
    let Some(s) = str_arg(&a, 0) else {
        return Ok(None);
    };
    let Some(chars) = str_arg(&a, 1) else {
        return Ok(Some(V::str(s)));
    };
    let out = match s.find(chars) {
        None => s.to_string(),
        Some(i) if before => s[..i].to_string(),
        Some(i) => s[i + chars.len()..].to_string(),
    };
    Ok(Some(V::string(out)))
}

fn pad(ev: &mut Evaluator, a: Args, _: Option<&V>) -> Res {
    let Some(s) = str_arg(&a, 0) else {
        return Ok(None);
    };
    let width = num_arg(&a, 1).unwrap_or(0.0);
    let fill = match str_arg(&a, 2) {
        Some(c) if !c.is_empty() => c,
        _ => " ",
    };
    let pad_len = width.abs().trunc() - s.chars().count() as f64;
    if pad_len <= 0.0 {
        return Ok(Some(V::str(s)));
    }
    ev.charge(pad_len as u64 / 8)?;
    let padding: String = fill.chars().cycle().take(pad_len as usize).collect();
    let out = if width > 0.0 {
        format!("{s}{padding}")
    } else {
        format!("{padding}{s}")
    };
    Ok(Some(V::string(out)))
}

fn pattern_of(v: Option<&V>) -> Option<Rc<Fun>> {
    match v {
        Some(V::Fun(f)) => Some(f.clone()),
        _ => None,
    }
}

/// The matches a matcher argument (a regex, or a function returning match objects) finds.
fn matcher_matches(
    ev: &mut Evaluator,
    matcher: &Rc<Fun>,
    s: &str,
    limit: Option<usize>,
) -> Result<Vec<crate::regex::Found>, Error> {
    match &**matcher {
        Fun::Regex(p) => p.matches(s, limit),
        _ => {
            let result = ev.apply(Some(&V::Fun(matcher.clone())), vec![Some(V::str(s))], None)?;
            let mut out = Vec::new();
            if let Some(V::Obj(o)) = result {
                let text = o
                    .map
                    .get("match")
                    .and_then(V::as_str)
                    .unwrap_or_default()
                    .to_string();
                let start = o.map.get("start").and_then(V::as_num).unwrap_or(0.0) as usize;
                let end = o.map.get("end").and_then(V::as_num).unwrap_or(0.0) as usize;
                let byte_start = s.char_indices().nth(start).map_or(s.len(), |(i, _)| i);
                let byte_end = s.char_indices().nth(end).map_or(s.len(), |(i, _)| i);
                out.push(crate::regex::Found {
                    text,
                    start,
                    end,
                    byte_start,
                    byte_end,
                    groups: Vec::new(),
                });
            }
            Ok(out)
        }
    }
}

fn match_object(found: &crate::regex::Found, with_end: bool) -> V {
    let mut map = IndexMap::new();
    map.insert("match".to_string(), V::str(&found.text));
    if with_end {
        map.insert("start".to_string(), V::Num(found.start as f64));
        map.insert("end".to_string(), V::Num(found.end as f64));
    } else {
        map.insert("index".to_string(), V::Num(found.start as f64));
    }
    map.insert(
        "groups".to_string(),
        V::array(
            found
                .groups
                .iter()
                .map(|g| g.as_deref().map_or(V::Null, V::str))
                .collect(),
        ),
    );
    V::object(map)
}

/// A regex applied as a function: its first match as a match object.
pub(crate) fn regex_match_object(pattern: &Pattern, input: Option<V>) -> Option<V> {
    let s = input?;
    let found = pattern.exec(s.as_str()?, 0)?;
    Some(match_object(&found, true))
}

fn limit_arg(a: &Args, i: usize, code: &str) -> Result<Option<usize>, Error> {
    match num_arg(a, i) {
        Some(n) if n < 0.0 => Err(Error::new(code)),
        Some(n) => Ok(Some(n as usize)),
        None => Ok(None),
    }
}

fn match_fn(ev: &mut Evaluator, a: Args, _: Option<&V>) -> Res {
    let Some(s) = str_arg(&a, 0) else {
        return Ok(None);
    };
    let limit = limit_arg(&a, 2, "D3040")?;
    let Some(matcher) = pattern_of(arg(&a, 1)) else {
        return Ok(None);
    };
    if limit == Some(0) {
        return Ok(Some(V::seq(vec![])));
    }
    let found = matcher_matches(ev, &matcher, s, limit)?;
    Ok(Some(V::seq(
        found.iter().map(|f| match_object(f, false)).collect(),
    )))
}

fn contains(a: Args) -> Res {
    let Some(s) = str_arg(&a, 0) else {
        return Ok(None);
    };
    let found = match arg(&a, 1) {
        Some(V::Str(t)) => s.contains(&**t),
        Some(V::Fun(f)) => match &**f {
            Fun::Regex(p) => p.exec(s, 0).is_some(),
            _ => false,
        },
        _ => false,
    };
    Ok(Some(V::Bool(found)))
}

fn substitute(replacement: &str, found: &crate::regex::Found) -> String {
    let chars: Vec<char> = replacement.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    let groups = &found.groups;
    while i < chars.len() {
        if chars[i] != '$' {
            out.push(chars[i]);
            i += 1;
            continue;
        }
        i += 1;
        match chars.get(i) {
            Some('$') => {
                out.push('$');
                i += 1;
            }
            Some('0') => {
                out.push_str(&found.text);
                i += 1;
            }
            _ => {
                let max_digits = if groups.is_empty() {
                    1
                } else {
                    groups.len().ilog10() as usize + 1
                };
                let digits: String = chars[i..]
                    .iter()
                    .take(max_digits)
                    .take_while(|c| c.is_ascii_digit())
                    .collect();
                let mut index: Option<usize> = digits.parse().ok();
                if max_digits > 1 && index.is_some_and(|n| n > groups.len()) {
                    index = digits[..digits.len().saturating_sub(1)].parse().ok();
                }
                match index {
                    Some(n) => {
                        if n >= 1 {
                            if let Some(Some(g)) = groups.get(n - 1) {
                                out.push_str(g);
                            }
                        }
                        i += n.to_string().len();
                    }
                    None => out.push('$'),
                }
            }
        }
    }
    out
}

fn replace(ev: &mut Evaluator, a: Args, _: Option<&V>) -> Res {
    let Some(s) = str_arg(&a, 0) else {
        return Ok(None);
    };
    if str_arg(&a, 1) == Some("") {
        return Err(Error::new("D3010"));
    }
    let limit = limit_arg(&a, 3, "D3011")?;
    if limit == Some(0) {
        return Ok(Some(V::str(s)));
    }
    let replacement = arg(&a, 2).cloned();
    if let Some(V::Str(pattern)) = arg(&a, 1) {
        let with = match &replacement {
            Some(V::Str(r)) => r.to_string(),
            _ => String::new(),
        };
        let mut out = String::new();
        let mut rest = s;
        let mut count = 0;
        while let Some(i) = rest.find(&**pattern) {
            if limit.is_some_and(|l| count >= l) {
                break;
            }
            out.push_str(&rest[..i]);
            out.push_str(&with);
            rest = &rest[i + pattern.len()..];
            count += 1;
        }
        out.push_str(rest);
        return Ok(Some(V::string(out)));
    }
    let Some(matcher) = pattern_of(arg(&a, 1)) else {
        return Ok(None);
    };
    let found = matcher_matches(ev, &matcher, s, limit)?;
    let mut out = String::new();
    let mut position = 0;
    for f in &found {
        out.push_str(&s[position..f.byte_start]);
        match &replacement {
            Some(V::Str(r)) => out.push_str(&substitute(r, f)),
            Some(func @ V::Fun(_)) => {
                match ev.apply(Some(func), vec![Some(match_object(f, true))], None)? {
                    Some(V::Str(r)) => out.push_str(&r),
                    _ => return Err(Error::new("D3012")),
                }
            }
            _ => {}
        }
        position = f.byte_end;
    }
    out.push_str(&s[position..]);
    Ok(Some(V::string(out)))
}

fn split(a: Args) -> Res {
    let Some(s) = str_arg(&a, 0) else {
        return Ok(None);
    };
    let limit = limit_arg(&a, 2, "D3020")?;
    let mut parts: Vec<String> = match arg(&a, 1) {
        Some(V::Str(sep)) if sep.is_empty() => s.chars().map(String::from).collect(),
        Some(V::Str(sep)) => s.split(&**sep).map(String::from).collect(),
        Some(V::Fun(f)) => match &**f {
            Fun::Regex(p) => {
                let found = p.matches(s, limit)?;
                let mut parts = Vec::new();
                let mut position = 0;
                for f in &found {
                    parts.push(s[position..f.byte_start].to_string());
                    position = f.byte_end;
                }
                if limit.is_none_or(|l| found.len() < l) {
                    parts.push(s[position..].to_string());
                }
                parts
            }
            _ => vec![s.to_string()],
        },
        _ => vec![s.to_string()],
    };
    if let Some(l) = limit {
        parts.truncate(l);
    }
    Ok(Some(V::array(parts.into_iter().map(V::string).collect())))
}

fn join(a: Args) -> Res {
    let Some(v) = arg(&a, 0) else { return Ok(None) };
    let sep = str_arg(&a, 1).unwrap_or("");
    let parts: Vec<String> = v
        .items()
        .iter()
        .filter_map(|i| i.as_str().map(String::from))
        .collect();
    Ok(Some(V::string(parts.join(sep))))
}

fn number(a: Args) -> Res {
    let Some(v) = arg(&a, 0) else { return Ok(None) };
    let n = match v {
        V::Num(n) => *n,
        V::Bool(b) => f64::from(u8::from(*b)),
        V::Str(s) => parse_number(s)
            .ok_or_else(|| Error::new("D3030").value(serde_json::Value::from(&**s).to_string()))?,
        other => return Err(Error::new("D3030").value(stringify(other, false)?)),
    };
    Ok(Some(V::Num(n)))
}

fn parse_number(s: &str) -> Option<f64> {
    let radix = |prefix: &[&str], radix: u32| {
        prefix
            .iter()
            .find_map(|p| s.strip_prefix(p))
            .and_then(|digits| u64::from_str_radix(digits, radix).ok())
            .map(|n| n as f64)
    };
    if let Some(n) = radix(&["0x", "0X"], 16)
        .or_else(|| radix(&["0o", "0O"], 8))
        .or_else(|| radix(&["0b", "0B"], 2))
    {
        return Some(n);
    }
    let body = s.strip_prefix('-').unwrap_or(s);
    let (mantissa, exponent) = match body.find(['e', 'E']) {
        Some(i) => (&body[..i], Some(&body[i + 1..])),
        None => (body, None),
    };
    let (int, frac) = match mantissa.split_once('.') {
        Some((i, f)) => (i, Some(f)),
        None => (mantissa, None),
    };
    let digits = |t: &str| !t.is_empty() && t.chars().all(|c| c.is_ascii_digit());
    let exp_ok = exponent.is_none_or(|e| digits(e.strip_prefix(['+', '-']).unwrap_or(e)));
    if !digits(int) || frac.is_some_and(|f| !digits(f)) || !exp_ok {
        return None;
    }
    s.parse::<f64>().ok().filter(|n| n.is_finite())
}

/// JSONata's `$round`: half to even, at `precision` decimal places.
pub(crate) fn round(n: f64, precision: f64) -> f64 {
    let shift = |x: f64, p: f64| -> f64 {
        let text = format_number(x);
        let (m, e) = text
            .split_once('e')
            .map_or((text.as_str(), 0.0), |(m, e)| (m, e.parse().unwrap_or(0.0)));
        format!("{m}e{}", e + p).parse().unwrap_or(x)
    };
    let p = precision.trunc();
    let value = if p != 0.0 { shift(n, p) } else { n };
    let mut result = (value + 0.5).floor();
    if (result - value).abs() == 0.5 && (result % 2.0).abs() == 1.0 {
        result -= 1.0;
    }
    if p != 0.0 {
        result = shift(result, -p);
    }
    if result == 0.0 {
        result = 0.0;
    }
    result
}

fn sqrt(a: Args) -> Res {
    let Some(n) = num_arg(&a, 0) else {
        return Ok(None);
    };
    if n < 0.0 {
        return Err(Error::new("D3060").value(format_number(n)));
    }
    Ok(Some(V::Num(n.sqrt())))
}

fn power(a: Args) -> Res {
    let Some(base) = num_arg(&a, 0) else {
        return Ok(None);
    };
    let exp = num_arg(&a, 1).unwrap_or(f64::NAN);
    let result = base.powf(exp);
    if !result.is_finite() {
        return Err(Error::new("D3061").value(format!(
            "base={}, exponent={}",
            format_number(base),
            format_number(exp)
        )));
    }
    Ok(Some(V::Num(result)))
}

fn func_arg(a: &Args, i: usize) -> Option<V> {
    arg(a, i).filter(|v| v.is_fun()).cloned()
}

fn map_fn(ev: &mut Evaluator, a: Args, _: Option<&V>) -> Res {
    let (Some(arr), Some(func)) = (arg(&a, 0), func_arg(&a, 1)) else {
        return Ok(None);
    };
    let items = arr.items();
    let mut out = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        out.extend(ev.apply_hof(&func, item.clone(), i, arr)?);
    }
    Ok(Some(V::seq(out)))
}

fn filter_fn(ev: &mut Evaluator, a: Args, _: Option<&V>) -> Res {
    let (Some(arr), Some(func)) = (arg(&a, 0), func_arg(&a, 1)) else {
        return Ok(None);
    };
    let mut out = Vec::new();
    for (i, item) in arr.items().iter().enumerate() {
        if ev
            .apply_hof(&func, item.clone(), i, arr)?
            .as_ref()
            .is_some_and(boolean)
        {
            out.push(item.clone());
        }
    }
    Ok(Some(V::seq(out)))
}

fn single(ev: &mut Evaluator, a: Args, _: Option<&V>) -> Res {
    let Some(arr) = arg(&a, 0) else {
        return Ok(None);
    };
    let func = func_arg(&a, 1);
    let mut result = None;
    for (i, item) in arr.items().iter().enumerate() {
        let pass = match &func {
            Some(f) => ev
                .apply_hof(f, item.clone(), i, arr)?
                .as_ref()
                .is_some_and(boolean),
            None => true,
        };
        if pass {
            if result.is_some() {
                return Err(Error::new("D3138"));
            }
            result = Some(item.clone());
        }
    }
    if result.is_none() {
        return Err(Error::new("D3139"));
    }
    Ok(result)
}

fn reduce(ev: &mut Evaluator, a: Args, _: Option<&V>) -> Res {
    let (Some(seq), Some(func)) = (arg(&a, 0), func_arg(&a, 1)) else {
        return Ok(None);
    };
    let arity = match &func {
        V::Fun(f) => f.arity(),
        _ => 0,
    };
    if arity < 2 {
        return Err(Error::new("D3050"));
    }
    let items = seq.items();
    let (mut result, start) = match arg(&a, 2) {
        None if !items.is_empty() => (Some(items[0].clone()), 1),
        init => (init.cloned(), 0),
    };
    for (index, item) in items.iter().enumerate().skip(start) {
        let mut args = vec![result, Some(item.clone())];
        if arity >= 3 {
            args.push(Some(V::Num(index as f64)));
        }
        if arity >= 4 {
            args.push(Some(seq.clone()));
        }
        result = ev.apply(Some(&func), args, None)?;
    }
    Ok(result)
}

fn object_entries_call(ev: &mut Evaluator, func: &V, obj: &V, key: &str, value: &V) -> Res {
    let arity = match func {
        V::Fun(f) => f.arity(),
        _ => 1,
    };
    let mut args = vec![Some(value.clone())];
    if arity >= 2 {
        args.push(Some(V::str(key)));
    }
    if arity >= 3 {
        args.push(Some(obj.clone()));
    }
    ev.apply(Some(func), args, None)
}

fn sift(ev: &mut Evaluator, a: Args, _: Option<&V>) -> Res {
    let (Some(obj @ V::Obj(o)), Some(func)) = (arg(&a, 0), func_arg(&a, 1)) else {
        return Ok(None);
    };
    let mut out = IndexMap::new();
    for (k, v) in &o.map {
        if object_entries_call(ev, &func, obj, k, v)?
            .as_ref()
            .is_some_and(boolean)
        {
            out.insert(k.clone(), v.clone());
        }
    }
    if out.is_empty() {
        return Ok(None);
    }
    Ok(Some(V::object(out)))
}

fn each(ev: &mut Evaluator, a: Args, _: Option<&V>) -> Res {
    let (Some(obj @ V::Obj(o)), Some(func)) = (arg(&a, 0), func_arg(&a, 1)) else {
        return Ok(None);
    };
    let mut out = Vec::new();
    for (k, v) in &o.map {
        out.extend(object_entries_call(ev, &func, obj, k, v)?);
    }
    Ok(Some(V::seq(out)))
}

fn keys(v: Option<&V>) -> Vec<V> {
    let Some(v) = v else { return Vec::new() };
    let mut seen: IndexMap<String, ()> = IndexMap::new();
    for item in crate::value::leaves(v) {
        if let V::Obj(o) = item {
            seen.extend(o.map.keys().map(|k| (k.clone(), ())));
        }
    }
    seen.into_keys().map(V::string).collect()
}

/// `$append`: concatenation, a single value counting as a one-item array.
pub(crate) fn append(a: Option<V>, b: Option<V>) -> Option<V> {
    let (a, b) = match (a, b) {
        (None, b) => return b,
        (a, None) => return a,
        (Some(a), Some(b)) => (a, b),
    };
    let mut items = a.items();
    match b {
        V::Arr(arr) => items.extend(arr.items.iter().cloned()),
        other => items.push(other),
    }
    Some(V::array(items))
}

fn spread(v: &V) -> V {
    if !matches!(v, V::Arr(_) | V::Obj(_)) {
        return v.clone();
    }
    let mut out = Vec::new();
    for item in crate::value::leaves(v) {
        match item {
            V::Obj(o) => out.extend(
                o.map
                    .iter()
                    .map(|(k, v)| V::object(IndexMap::from([(k.clone(), v.clone())]))),
            ),
            other => out.push(other),
        }
    }
    V::seq(out)
}

fn merge(v: &V) -> V {
    let mut out = IndexMap::new();
    for item in v.items() {
        if let V::Obj(o) = item {
            for (k, v) in &o.map {
                out.insert(k.clone(), v.clone());
            }
        }
    }
    V::object(out)
}

fn reverse(v: &V) -> V {
    let mut items = v.items();
    if items.len() <= 1 {
        return v.clone();
    }
    items.reverse();
    V::array(items)
}

fn shuffle(v: &V) -> V {
    let mut items = v.items();
    if items.len() <= 1 {
        return v.clone();
    }
    fastrand::shuffle(&mut items);
    V::array(items)
}

fn distinct(v: &V) -> V {
    let V::Arr(a) = v else { return v.clone() };
    if a.items.len() <= 1 {
        return v.clone();
    }
    let mut out: Vec<V> = Vec::new();
    for item in &a.items {
        if !out.iter().any(|o| deep_equal(o, item, 0)) {
            out.push(item.clone());
        }
    }
    V::Arr(Rc::new(Arr {
        items: out,
        seq: a.seq,
        ..Arr::default()
    }))
}

fn assert(a: Args) -> Res {
    if matches!(arg(&a, 0), Some(V::Bool(false))) {
        let message = str_arg(&a, 1).unwrap_or("$assert() statement failed");
        return Err(Error::with_message("D3141", message));
    }
    Ok(None)
}

fn sort(ev: &mut Evaluator, a: Args, _: Option<&V>) -> Res {
    let Some(v) = arg(&a, 0) else { return Ok(None) };
    let items = v.items();
    if items.len() <= 1 {
        return Ok(Some(v.clone()));
    }
    let sorted = match func_arg(&a, 1) {
        Some(func) => merge_sort(items, &mut |x, y| {
            let r = ev.apply(Some(&func), vec![Some(x.clone()), Some(y.clone())], None)?;
            Ok(r.as_ref().is_some_and(boolean))
        })?,
        None => {
            let all_num = items.iter().all(|i| matches!(i, V::Num(_)));
            let all_str = items.iter().all(|i| matches!(i, V::Str(_)));
            if !all_num && !all_str {
                return Err(Error::new("D3070"));
            }
            merge_sort(items, &mut |x, y| {
                Ok(match (x, y) {
                    (V::Num(p), V::Num(q)) => p > q,
                    (V::Str(p), V::Str(q)) => js_cmp(p, q) == std::cmp::Ordering::Greater,
                    _ => false,
                })
            })?
        }
    };
    Ok(Some(V::array(sorted)))
}

fn zip(a: Args) -> Res {
    let arrays: Vec<Vec<V>> = a
        .iter()
        .map(|v| v.as_ref().map_or_else(Vec::new, V::items))
        .collect();
    let len = arrays.iter().map(Vec::len).min().unwrap_or(0);
    let out = (0..len)
        .map(|i| V::array(arrays.iter().map(|arr| arr[i].clone()).collect()))
        .collect();
    Ok(Some(V::array(out)))
}

fn eval_fn(ev: &mut Evaluator, a: Args, input: Option<&V>) -> Res {
    let Some(text) = str_arg(&a, 0) else {
        return Ok(None);
    };
    let expr =
        crate::Expression::parse(text).map_err(|e| Error::new("D3120").value(e.message()))?;
    let focus = match a.get(1) {
        Some(Some(v)) => Some(v.clone()),
        _ => input.cloned(),
    };
    let parent = ev.call_env.take();
    let env = ev.frame(parent.as_ref());
    ev.eval(expr.root(), focus.as_ref(), &env)
        .map_err(|e| Error::new("D3121").value(e.message()))
}
