//! The transformers' parsers for logs AWS services vend: VPC flow logs (`parseVPC`, the
//! default version 2 format), Route 53 public DNS query logs (`parseRoute53`), RDS for
//! PostgreSQL logs (`parsePostgres`, the default `log_line_prefix`), CloudFront standard
//! logs (`parseCloudfront`, tab-separated) and AWS WAF logs (`parseWAF`, JSON whose
//! request headers become a map). Each reads the whole message into a JSON object, or
//! nothing when the message is not in its format.

use regex_lite::Regex;
use serde_json::{Map, Value as Json};

/// The vended-log parsers, which may only come first in a transformer.
pub(super) const PARSERS: [&str; 5] = [
    "parseCloudfront",
    "parseRoute53",
    "parsePostgres",
    "parseVPC",
    "parseWAF",
];

const VPC: [&str; 14] = [
    "version",
    "account_id",
    "interface_id",
    "srcaddr",
    "dstaddr",
    "srcport",
    "dstport",
    "protocol",
    "packets",
    "bytes",
    "start",
    "end",
    "action",
    "log_status",
];

const ROUTE53: [&str; 10] = [
    "version",
    "queryTimestamp",
    "hostZoneId",
    "queryName",
    "queryType",
    "responseCode",
    "protocol",
    "edgeLocation",
    "resolverIp",
    "ednsClientSubnet",
];

const CLOUDFRONT: [&str; 33] = [
    "date",
    "time",
    "x-edge-location",
    "sc-bytes",
    "c-ip",
    "cs-method",
    "cs(Host)",
    "cs-uri-stem",
    "sc-status",
    "cs(Referer)",
    "cs(User-Agent)",
    "cs-uri-query",
    "cs(Cookie)",
    "x-edge-result-type",
    "x-edge-request-id",
    "x-host-header",
    "cs-protocol",
    "cs-bytes",
    "time-taken",
    "x-forwarded-for",
    "ssl-protocol",
    "ssl-cipher",
    "x-edge-response-result-type",
    "cs-protocol-version",
    "fle-status",
    "fle-encrypted-fields",
    "c-port",
    "time-to-first-byte",
    "x-edge-detailed-result-type",
    "sc-content-type",
    "sc-content-len",
    "sc-range-start",
    "sc-range-end",
];

/// The fields of a vended log message, or `None` when it is not in `parser`'s format.
pub(super) fn parse(parser: &str, message: &str) -> Option<Map<String, Json>> {
    match parser {
        "parseVPC" => fields(&VPC, &VPC_NUMBERS, message.split_whitespace()),
        "parseRoute53" => fields(&ROUTE53, &[], message.split_whitespace()),
        "parseCloudfront" => fields(
            &CLOUDFRONT,
            &CLOUDFRONT_NUMBERS,
            message.trim_end_matches('\n').split('\t'),
        ),
        "parsePostgres" => postgres(message),
        "parseWAF" => waf(message),
        _ => None,
    }
}

/// The VPC flow log fields that hold numbers.
const VPC_NUMBERS: [&str; 8] = [
    "version", "srcport", "dstport", "protocol", "packets", "bytes", "start", "end",
];

/// The CloudFront log fields that hold numbers.
const CLOUDFRONT_NUMBERS: [&str; 7] = [
    "sc-bytes",
    "sc-status",
    "cs-bytes",
    "time-taken",
    "c-port",
    "time-to-first-byte",
    "sc-content-len",
];

/// Values named in order, exactly as many as names; those named in `numbers` become
/// numbers when they read as one.
fn fields<'a>(
    names: &[&str],
    numbers: &[&str],
    values: impl Iterator<Item = &'a str>,
) -> Option<Map<String, Json>> {
    let values: Vec<&str> = values.collect();
    if values.len() != names.len() {
        return None;
    }
    Some(
        names
            .iter()
            .zip(values)
            .map(|(name, value)| {
                let number = numbers
                    .contains(name)
                    .then(|| serde_json::from_str::<serde_json::Number>(value).ok())
                    .flatten();
                let value = number.map_or_else(|| Json::from(value), Json::Number);
                (name.to_string(), value)
            })
            .collect(),
    )
}

/// RDS for PostgreSQL's default prefix, `%t:%r:%u@%d:[%p]:`, and the level after it.
fn postgres(message: &str) -> Option<Map<String, Json>> {
    let pattern = Regex::new(
        r"^(\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} \w+):([^:]*):([^@]*)@([^:]*):\[(\d+)\]:(\w+):",
    )
    .ok()?;
    let caps = pattern.captures(message)?;
    let names = [
        "logTime",
        "srcIp",
        "userName",
        "dbName",
        "processId",
        "logLevel",
    ];
    Some(
        names
            .iter()
            .enumerate()
            .map(|(i, name)| (name.to_string(), Json::from(&caps[i + 1])))
            .collect(),
    )
}

/// A WAF log (JSON) with `httpRequest.headers`, a list of `{name, value}`, as a map.
fn waf(message: &str) -> Option<Map<String, Json>> {
    let Json::Object(mut log) = serde_json::from_str(message).ok()? else {
        return None;
    };
    if let Some(Json::Array(headers)) = log
        .get_mut("httpRequest")
        .and_then(|r| r.get_mut("headers"))
        .map(std::mem::take)
    {
        let map: Map<String, Json> = headers
            .into_iter()
            .filter_map(|h| {
                Some((
                    h.get("name")?.as_str()?.to_string(),
                    h.get("value")?.clone(),
                ))
            })
            .collect();
        if let Some(request) = log.get_mut("httpRequest").and_then(Json::as_object_mut) {
            request.insert("headers".into(), Json::Object(map));
        }
    }
    Some(log)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn vpc_flow_logs_read_the_default_format() {
        let got = parse(
            "parseVPC",
            "2 123456789010 eni-abc123de 192.0.2.0 192.0.2.24 20641 22 6 20 4249 1418530010 1418530070 ACCEPT OK",
        )
        .unwrap();
        assert_eq!(got["account_id"], json!("123456789010"));
        assert_eq!(got["srcport"], json!(20641));
        assert_eq!(got["action"], json!("ACCEPT"));
        assert!(parse("parseVPC", "2 too short").is_none());
    }

    #[test]
    fn route53_postgres_cloudfront_and_waf() {
        let r53 = parse(
            "parseRoute53",
            "1.0 2017-12-13T08:15:50.235Z Z123412341234 example.com AAAA NOERROR TCP IAD12 192.0.2.0 198.51.100.0/24",
        )
        .unwrap();
        assert_eq!(r53["queryName"], json!("example.com"));
        let pg = parse(
            "parsePostgres",
            "2019-03-10 03:54:59 UTC:10.0.0.123(52834):postgres@logs:[20175]:ERROR: column \"x\" does not exist",
        )
        .unwrap();
        assert_eq!(pg["srcIp"], json!("10.0.0.123(52834)"));
        assert_eq!(pg["logLevel"], json!("ERROR"));
        let line = CLOUDFRONT
            .iter()
            .enumerate()
            .map(|(i, _)| {
                if i == 8 {
                    "200".to_string()
                } else {
                    format!("v{i}")
                }
            })
            .collect::<Vec<_>>()
            .join("\t");
        let cf = parse("parseCloudfront", &line).unwrap();
        assert_eq!(cf["sc-status"], json!(200));
        assert_eq!(cf["cs-method"], json!("v5"));
        let waf = parse(
            "parseWAF",
            r#"{"action":"ALLOW","httpRequest":{"headers":[{"name":"Host","value":"a.com"}]}}"#,
        )
        .unwrap();
        assert_eq!(waf["httpRequest"]["headers"], json!({"Host": "a.com"}));
    }
}
