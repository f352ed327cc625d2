//! Grok, as the transformers' `grok` processor reads it: a regular expression in which
//! `%{PATTERN}` stands for a named pattern of the library below and `%{PATTERN:field}`
//! captures what it matched into `field`.
//!
//! A grok expression is translated once into one `regex-lite` expression: the library is
//! Logstash's patterns (those CloudWatch Logs lists as supported), rewritten without the
//! look-around and atomic groups that `regex-lite` (and Rust's regex crates) do not have,
//! and every capture becomes a numbered group whose field name is kept beside it, since
//! field names may hold dots that group names may not. A pattern library crate would
//! bring its own regex engine (Oniguruma, in C) for a few dozen definitions.

use regex_lite::Regex;

/// The most `%{...}` references a `match` may hold, and its longest length (AWS's limits).
const MAX_PATTERNS: usize = 20;
const MAX_MATCH: usize = 512;
/// How deeply library patterns may refer to each other (the library's own depth is 4).
const MAX_EXPANSION: usize = 8;

/// The pattern library: each name and its definition (which may refer to others).
const LIBRARY: &[(&str, &str)] = &[
    ("USERNAME", r"[a-zA-Z0-9._-]+"),
    ("USER", r"%{USERNAME}"),
    (
        "EMAILLOCALPART",
        r"[a-zA-Z0-9!#$%&'*+/=?^_`{|}~-]{1,64}(?:\.[a-zA-Z0-9!#$%&'*+/=?^_`{|}~-]{1,62}){0,63}",
    ),
    ("EMAILADDRESS", r"%{EMAILLOCALPART}@%{HOSTNAME}"),
    ("INT", r"(?:[+-]?(?:[0-9]+))"),
    ("BASE10NUM", r"(?:[+-]?(?:[0-9]+(?:\.[0-9]+)?|\.[0-9]+))"),
    ("NUMBER", r"(?:%{BASE10NUM})"),
    ("BASE16NUM", r"(?:[+-]?(?:0x)?(?:[0-9A-Fa-f]+))"),
    ("POSINT", r"\b(?:[1-9][0-9]*)\b"),
    ("NONNEGINT", r"\b(?:[0-9]+)\b"),
    ("WORD", r"\b\w+\b"),
    ("NOTSPACE", r"\S+"),
    ("SPACE", r"\s*"),
    ("DATA", r".*?"),
    ("GREEDYDATA", r".*"),
    (
        "QUOTEDSTRING",
        r#"(?:"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`(?:[^`\\]|\\.)*`)"#,
    ),
    ("QS", r"%{QUOTEDSTRING}"),
    (
        "UUID",
        r"[A-Fa-f0-9]{8}-(?:[A-Fa-f0-9]{4}-){3}[A-Fa-f0-9]{12}",
    ),
    (
        "URN",
        r"urn:[0-9A-Za-z][0-9A-Za-z-]{0,31}:(?:%[0-9a-fA-F]{2}|[0-9A-Za-z()+,.:=@;$_!*'/?#-])+",
    ),
    (
        "ARN",
        r"arn:aws[a-z-]*:[a-z0-9-]+:[a-z0-9-]*:(?:[0-9]{12})?:[^\s]+",
    ),
    ("CISCOMAC", r"(?:[A-Fa-f0-9]{4}\.){2}[A-Fa-f0-9]{4}"),
    ("WINDOWSMAC", r"(?:[A-Fa-f0-9]{2}-){5}[A-Fa-f0-9]{2}"),
    ("COMMONMAC", r"(?:[A-Fa-f0-9]{2}:){5}[A-Fa-f0-9]{2}"),
    ("MAC", r"(?:%{CISCOMAC}|%{WINDOWSMAC}|%{COMMONMAC})"),
    (
        "IPV6",
        r"(?:(?:[0-9A-Fa-f]{1,4}:){7}[0-9A-Fa-f]{1,4}|(?:[0-9A-Fa-f]{1,4}:){1,7}:|(?:[0-9A-Fa-f]{1,4}:){1,6}:[0-9A-Fa-f]{1,4}|(?:[0-9A-Fa-f]{1,4}:){1,5}(?::[0-9A-Fa-f]{1,4}){1,2}|(?:[0-9A-Fa-f]{1,4}:){1,4}(?::[0-9A-Fa-f]{1,4}){1,3}|(?:[0-9A-Fa-f]{1,4}:){1,3}(?::[0-9A-Fa-f]{1,4}){1,4}|(?:[0-9A-Fa-f]{1,4}:){1,2}(?::[0-9A-Fa-f]{1,4}){1,5}|[0-9A-Fa-f]{1,4}:(?::[0-9A-Fa-f]{1,4}){1,6}|:(?:(?::[0-9A-Fa-f]{1,4}){1,7}|:))",
    ),
    (
        "IPV4",
        r"(?:(?:25[0-5]|2[0-4][0-9]|[01]?[0-9][0-9]?)\.){3}(?:25[0-5]|2[0-4][0-9]|[01]?[0-9][0-9]?)",
    ),
    ("IP", r"(?:%{IPV6}|%{IPV4})"),
    (
        "HOSTNAME",
        r"\b(?:[0-9A-Za-z][0-9A-Za-z-]{0,62})(?:\.(?:[0-9A-Za-z][0-9A-Za-z-]{0,62}))*\.?",
    ),
    ("HOST", r"%{HOSTNAME}"),
    ("IPORHOST", r"(?:%{IP}|%{HOSTNAME})"),
    ("HOSTPORT", r"%{IPORHOST}:%{POSINT}"),
    ("UNIXPATH", r"(?:/[\w_%!$@:.,+~-]*)+"),
    ("WINPATH", r"(?:[A-Za-z]+:|\\)(?:\\[^\\?*]*)+"),
    ("PATH", r"(?:%{UNIXPATH}|%{WINPATH})"),
    ("TTY", r"(?:/dev/(?:pts|tty(?:[pq])?)(?:\w+)?/?(?:[0-9]+))"),
    ("URIPROTO", r"[A-Za-z](?:[A-Za-z0-9+.-]+)+"),
    ("URIHOST", r"%{IPORHOST}(?::%{POSINT})?"),
    ("URIPATH", r"(?:/[A-Za-z0-9$.+!*'(){},~:;=@#%&_-]*)+"),
    ("URIPARAM", r"\?[A-Za-z0-9$.+!*'|(){},~@#%&/=:;_?\[\]<>-]*"),
    ("URIPATHPARAM", r"%{URIPATH}(?:%{URIPARAM})?"),
    (
        "URI",
        r"%{URIPROTO}://(?:%{USER}(?::[^@]*)?@)?(?:%{URIHOST})?(?:%{URIPATHPARAM})?",
    ),
    (
        "MONTH",
        r"\b(?:[Jj]an(?:uary)?|[Ff]eb(?:ruary)?|[Mm]ar(?:ch)?|[Aa]pr(?:il)?|[Mm]ay|[Jj]un(?:e)?|[Jj]ul(?:y)?|[Aa]ug(?:ust)?|[Ss]ep(?:tember)?|[Oo]ct(?:ober)?|[Nn]ov(?:ember)?|[Dd]ec(?:ember)?)\b",
    ),
    ("MONTHNUM", r"(?:0?[1-9]|1[0-2])"),
    ("MONTHNUM2", r"(?:0[1-9]|1[0-2])"),
    ("MONTHDAY", r"(?:(?:0[1-9])|(?:[12][0-9])|(?:3[01])|[1-9])"),
    (
        "DAY",
        r"(?:Mon(?:day)?|Tue(?:sday)?|Wed(?:nesday)?|Thu(?:rsday)?|Fri(?:day)?|Sat(?:urday)?|Sun(?:day)?)",
    ),
    ("YEAR", r"(?:\d\d){1,2}"),
    ("HOUR", r"(?:2[0123]|[01]?[0-9])"),
    ("MINUTE", r"(?:[0-5][0-9])"),
    ("SECOND", r"(?:(?:[0-5]?[0-9]|60)(?:[:.,][0-9]+)?)"),
    ("TIME", r"%{HOUR}:%{MINUTE}(?::%{SECOND})"),
    ("DATE_US", r"%{MONTHNUM}[/-]%{MONTHDAY}[/-]%{YEAR}"),
    ("DATE_EU", r"%{MONTHDAY}[./-]%{MONTHNUM}[./-]%{YEAR}"),
    ("ISO8601_TIMEZONE", r"(?:Z|[+-]%{HOUR}(?::?%{MINUTE}))"),
    ("ISO8601_SECOND", r"%{SECOND}"),
    (
        "TIMESTAMP_ISO8601",
        r"%{YEAR}-%{MONTHNUM}-%{MONTHDAY}[T ]%{HOUR}:?%{MINUTE}(?::?%{SECOND})?%{ISO8601_TIMEZONE}?",
    ),
    ("DATE", r"(?:%{DATE_US}|%{DATE_EU})"),
    ("DATESTAMP", r"%{DATE}[- ]%{TIME}"),
    ("TZ", r"(?:[APMCE][SD]T|UTC)"),
    (
        "DATESTAMP_RFC822",
        r"%{DAY} %{MONTH} %{MONTHDAY} %{YEAR} %{TIME} %{TZ}",
    ),
    (
        "DATESTAMP_RFC2822",
        r"%{DAY}, %{MONTHDAY} %{MONTH} %{YEAR} %{TIME} %{ISO8601_TIMEZONE}",
    ),
    (
        "DATESTAMP_OTHER",
        r"%{DAY} %{MONTH} %{MONTHDAY} %{TIME} %{TZ} %{YEAR}",
    ),
    (
        "DATESTAMP_EVENTLOG",
        r"%{YEAR}%{MONTHNUM2}%{MONTHDAY}%{HOUR}%{MINUTE}%{SECOND}",
    ),
    ("SYSLOGTIMESTAMP", r"%{MONTH} +%{MONTHDAY} %{TIME}"),
    ("HTTPDATE", r"%{MONTHDAY}/%{MONTH}/%{YEAR}:%{TIME} %{INT}"),
    (
        "LOGLEVEL",
        r"(?:[Aa]lert|ALERT|[Tt]race|TRACE|[Dd]ebug|DEBUG|[Nn]otice|NOTICE|[Ii]nfo(?:rmation)?|INFO(?:RMATION)?|[Ww]arn(?:ing)?|WARN(?:ING)?|[Ee]rr(?:or)?|ERR(?:OR)?|[Cc]rit(?:ical)?|CRIT(?:ICAL)?|[Ff]atal|FATAL|[Ss]evere|SEVERE|EMERG(?:ENCY)?|[Ee]merg(?:ency)?)",
    ),
    (
        "COMMONAPACHELOG",
        r#"%{IPORHOST:clientip} %{USER:ident} %{USER:auth} \[%{HTTPDATE:timestamp}\] "(?:%{WORD:verb} %{NOTSPACE:request}(?: HTTP/%{NUMBER:httpversion})?|%{DATA:rawrequest})" %{NUMBER:response} (?:%{NUMBER:bytes}|-)"#,
    ),
    (
        "COMBINEDAPACHELOG",
        r"%{COMMONAPACHELOG} %{QS:referrer} %{QS:agent}",
    ),
];

/// A compiled grok expression: the regex and, for each capture group, its field.
#[derive(Debug)]
pub(super) struct Grok {
    regex: Regex,
    fields: Vec<String>,
}

impl Grok {
    /// Compiles a `match` expression; the error says what is wrong with it.
    pub(super) fn compile(expression: &str) -> Result<Grok, String> {
        if expression.is_empty() || expression.len() > MAX_MATCH {
            return Err(format!(
                "The grok match must be between 1 and {MAX_MATCH} characters long"
            ));
        }
        if expression.matches("%{").count() > MAX_PATTERNS {
            return Err(format!(
                "The grok match may use at most {MAX_PATTERNS} grok patterns"
            ));
        }
        let mut fields = Vec::new();
        let source = expand(expression, &mut fields, 0)?;
        let regex = Regex::new(&source).map_err(|e| format!("Invalid grok match: {e}"))?;
        Ok(Grok { regex, fields })
    }

    /// The fields a text's first match captured, or `None` when it does not match.
    pub(super) fn captures(&self, text: &str) -> Option<Vec<(&str, String)>> {
        let caps = self.regex.captures(text)?;
        Some(
            self.fields
                .iter()
                .enumerate()
                .filter_map(|(i, field)| {
                    let value = caps.name(&format!("g{i}"))?.as_str().to_string();
                    Some((field.as_str(), value))
                })
                .collect(),
        )
    }
}

/// `text` with every `%{NAME[:field]}` replaced by its definition, captures numbered.
fn expand(text: &str, fields: &mut Vec<String>, depth: usize) -> Result<String, String> {
    if depth > MAX_EXPANSION {
        return Err("Grok patterns nest too deeply".into());
    }
    let mut out = String::new();
    let mut rest = text;
    while let Some(start) = rest.find("%{") {
        out.push_str(&rest[..start]);
        let Some(len) = rest[start..].find('}') else {
            return Err("Unterminated grok pattern: missing '}'".into());
        };
        let inner = &rest[start + 2..start + len];
        rest = &rest[start + len + 1..];
        let mut parts = inner.splitn(3, ':');
        let name = parts.next().unwrap_or_default();
        let field = parts.next().filter(|f| !f.is_empty());
        let Some((_, definition)) = LIBRARY.iter().find(|(n, _)| *n == name) else {
            return Err(format!("Unsupported grok pattern: {name}"));
        };
        let body = expand(definition, fields, depth + 1)?;
        match field {
            Some(field) => {
                out.push_str(&format!("(?P<g{}>{body})", fields.len()));
                fields.push(field.to_string());
            }
            None => out.push_str(&format!("(?:{body})")),
        }
    }
    out.push_str(rest);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields(grok: &str, text: &str) -> Vec<(String, String)> {
        Grok::compile(grok)
            .unwrap()
            .captures(text)
            .unwrap_or_default()
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect()
    }

    #[test]
    fn every_library_pattern_compiles() {
        for (name, _) in LIBRARY {
            Grok::compile(&format!("%{{{name}:x}}")).unwrap_or_else(|e| panic!("{name}: {e}"));
        }
    }

    #[test]
    fn patterns_capture_named_fields() {
        let got = fields(
            "%{IP:client.ip} %{WORD:method} %{URIPATHPARAM:request} %{NUMBER:bytes} %{NUMBER:duration}",
            "55.3.244.1 GET /index.html?x=1 15824 0.043",
        );
        let want = [
            ("client.ip", "55.3.244.1"),
            ("method", "GET"),
            ("request", "/index.html?x=1"),
            ("bytes", "15824"),
            ("duration", "0.043"),
        ];
        assert_eq!(
            got,
            want.map(|(k, v)| (k.to_string(), v.to_string())).to_vec()
        );
        let apache = fields(
            "%{COMMONAPACHELOG}",
            r#"127.0.0.1 - frank [10/Oct/2000:13:55:36 -0700] "GET /apache_pb.gif HTTP/1.0" 200 2326"#,
        );
        assert!(apache.contains(&("verb".into(), "GET".into())));
        assert!(apache.contains(&("timestamp".into(), "10/Oct/2000:13:55:36 -0700".into())));
        assert!(fields(
            "%{TIMESTAMP_ISO8601:t} %{LOGLEVEL:l}",
            "2024-01-02T03:04:05Z WARN x"
        )
        .contains(&("l".into(), "WARN".into())));
    }

    #[test]
    fn bad_expressions_are_refused() {
        for bad in [
            "%{NOPE:x}",
            "%{WORD:x",
            "",
            &"%{WORD} ".repeat(21),
            &"a".repeat(513),
            "%{WORD:x} (",
        ] {
            assert!(Grok::compile(bad).is_err(), "{bad}");
        }
    }
}
