//! Function signatures (`<s-nn?:s>`): parsed into one regular expression over the letters of
//! the arguments' types, exactly as the reference implementation validates, so that context
//! substitution (`-`), optional (`?`) and repeated (`+`) parameters, choices (`(sn)`) and
//! typed arrays (`a<n>`) behave the same, with the same T0410/T0411/T0412 errors.

use regex_lite::Regex;

use crate::error::Error;
use crate::value::V;

#[derive(Debug, Clone)]
struct Param {
    regex: String,
    kind: char,
    context: bool,
    subtype: Option<String>,
}

/// A parsed signature.
#[derive(Debug, Clone)]
pub(crate) struct Signature {
    params: Vec<Param>,
    regex: Regex,
}

fn closing(text: &[char], start: usize, open: char, close: char) -> usize {
    let mut depth = 1;
    let mut i = start;
    while i + 1 < text.len() {
        i += 1;
        if text[i] == open {
            depth += 1;
        } else if text[i] == close {
            depth -= 1;
            if depth == 0 {
                return i;
            }
        }
    }
    i
}

impl Signature {
    /// Parses `<...>`.
    pub(crate) fn parse(text: &str) -> Result<Signature, Error> {
        let chars: Vec<char> = text.chars().collect();
        let mut params: Vec<Param> = Vec::new();
        let mut i = 1;
        while i < chars.len() {
            let c = chars[i];
            if c == ':' {
                break;
            }
            let mut push = |regex: String, kind: char| {
                params.push(Param {
                    regex,
                    kind,
                    context: false,
                    subtype: None,
                })
            };
            match c {
                's' | 'n' | 'b' | 'l' | 'o' => push(format!("[{c}m]"), c),
                'a' => push("[asnblfom]".into(), c),
                'f' => push("f".into(), c),
                'j' => push("[asnblom]".into(), c),
                'x' => push("[asnblfom]".into(), c),
                '-' => {
                    if let Some(prev) = params.last_mut() {
                        prev.context = true;
                        prev.regex.push('?');
                    }
                }
                '?' | '+' => {
                    if let Some(prev) = params.last_mut() {
                        prev.regex.push(c);
                    }
                }
                '(' => {
                    let end = closing(&chars, i, '(', ')');
                    let choice: String = chars[i + 1..end].iter().collect();
                    if choice.contains('<') {
                        return Err(Error::new("S0402").value(choice));
                    }
                    push(format!("[{choice}m]"), '(');
                    i = end;
                }
                '<' => {
                    let Some(prev) = params.last_mut().filter(|p| matches!(p.kind, 'a' | 'f'))
                    else {
                        return Err(Error::new("S0401"));
                    };
                    let end = closing(&chars, i, '<', '>');
                    prev.subtype = Some(chars[i + 1..end].iter().collect());
                    i = end;
                }
                _ => {}
            }
            i += 1;
        }
        let body: String = params.iter().map(|p| format!("({})", p.regex)).collect();
        let regex = Regex::new(&format!("^{body}$")).map_err(|_| Error::new("S0401"))?;
        Ok(Signature { params, regex })
    }

    /// Checks the arguments, substituting the context for a missing `-` argument and
    /// wrapping single values where an array is due.
    pub(crate) fn validate(
        &self,
        args: &[Option<V>],
        context: Option<&V>,
    ) -> Result<Vec<Option<V>>, Error> {
        let supplied: String = args.iter().map(symbol).collect();
        let Some(caps) = self.regex.captures(&supplied) else {
            return Err(self.mismatch(args, &supplied));
        };
        let mut out = Vec::with_capacity(self.params.len());
        let mut arg_index = 0;
        for (index, param) in self.params.iter().enumerate() {
            let matched = caps.get(index + 1).map_or("", |m| m.as_str());
            if matched.is_empty() {
                if param.context {
                    let context_symbol = context.map_or('m', V::symbol);
                    let plain = param.regex.trim_end_matches('?');
                    let ok =
                        Regex::new(plain).is_ok_and(|r| r.is_match(&context_symbol.to_string()));
                    if !ok {
                        return Err(Error::new("T0411").value((arg_index + 1).to_string()));
                    }
                    out.push(context.cloned());
                } else {
                    out.push(args.get(arg_index).cloned().flatten());
                    arg_index += 1;
                }
                continue;
            }
            for single in matched.chars() {
                let arg = args.get(arg_index).cloned().flatten();
                if param.kind == 'a' {
                    out.push(self.array_arg(param, single, matched, arg, arg_index)?);
                } else {
                    out.push(arg);
                }
                arg_index += 1;
            }
        }
        Ok(out)
    }

    fn array_arg(
        &self,
        param: &Param,
        single: char,
        matched: &str,
        arg: Option<V>,
        arg_index: usize,
    ) -> Result<Option<V>, Error> {
        let Some(arg) = arg else {
            return Ok(None);
        };
        if let Some(subtype) = &param.subtype {
            let ok = if single != 'a' {
                matched == subtype
            } else {
                let items = arg.as_arr().map(|a| a.items.as_slice()).unwrap_or(&[]);
                match items.first() {
                    None => true,
                    Some(first) => {
                        let t = first.symbol();
                        subtype.starts_with(t) && items.iter().all(|v| v.symbol() == t)
                    }
                }
            };
            if !ok {
                return Err(Error::new("T0412").value((arg_index + 1).to_string()));
            }
        }
        if single != 'a' {
            return Ok(Some(V::array(vec![arg])));
        }
        Ok(Some(arg))
    }

    fn mismatch(&self, args: &[Option<V>], supplied: &str) -> Error {
        let mut partial = String::from("^");
        let mut good_to = 0;
        for param in &self.params {
            partial.push_str(&param.regex);
            match Regex::new(&partial).ok().and_then(|r| r.find(supplied)) {
                Some(m) => good_to = m.end(),
                None => break,
            }
        }
        let _ = args;
        Error::new("T0410").value((good_to + 1).to_string())
    }

    /// The number of parameters, which higher-order functions use as the arity.
    pub(crate) fn arity(&self) -> usize {
        self.params.len()
    }
}

fn symbol(arg: &Option<V>) -> char {
    arg.as_ref().map_or('m', V::symbol)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn codes(sig: &str, args: Vec<Option<V>>, context: Option<V>) -> Result<usize, String> {
        let sig = Signature::parse(sig).map_err(|e| e.code().to_string())?;
        sig.validate(&args, context.as_ref())
            .map(|v| v.len())
            .map_err(|e| e.code().to_string())
    }

    #[test]
    fn context_fills_a_missing_first_argument() {
        assert_eq!(codes("<s-:s>", vec![], Some(V::str("a"))), Ok(1));
        assert_eq!(
            codes("<s-:s>", vec![], Some(V::Num(1.0))),
            Err("T0411".into())
        );
    }

    #[test]
    fn optional_and_mismatched_arguments() {
        assert_eq!(
            codes(
                "<s-nn?:s>",
                vec![Some(V::str("a")), Some(V::Num(1.0))],
                None
            ),
            Ok(3)
        );
        assert_eq!(
            codes(
                "<s-nn?:s>",
                vec![Some(V::str("a")), Some(V::str("b"))],
                None
            ),
            Err("T0410".into())
        );
    }

    #[test]
    fn typed_arrays_check_their_items() {
        let mixed = V::array(vec![V::Num(1.0), V::str("x")]);
        assert_eq!(
            codes("<a<n>:n>", vec![Some(mixed)], None),
            Err("T0412".into())
        );
    }
}
