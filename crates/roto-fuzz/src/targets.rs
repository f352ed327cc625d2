//! The fuzz targets: one per parser whose input a request controls, each a function over
//! raw bytes and the grammar its mutations draw on.
//!
//! Codec and router targets read their input as a small HTTP request (`METHOD target`,
//! header lines, a blank line, the body), so that mutations reach methods, paths, query
//! strings, headers and bodies alike. The others take the input as the text of one
//! expression, pattern, statement, query or document.

use http::{HeaderMap, HeaderName, HeaderValue, Method};
use roto_chunked::{ChunkedDecoder, ChunkedKind};
use roto_core::model::model;
use roto_core::protocol::{xml, Protocol, WireRequest};
use roto_services::pattern::{Dialect, Pattern};

use crate::mutate::Grammar;

/// One fuzz target.
pub struct Target {
    /// Its name, also the name of its corpus and regression directories.
    pub name: &'static str,
    /// Runs one input; any panic or stack overflow is a finding.
    pub run: fn(&[u8]),
    /// The tokens and nesting pairs its mutations use.
    pub grammar: Grammar,
}

/// Every target.
pub const TARGETS: &[Target] = &[
    Target {
        name: "query",
        run: query,
        grammar: QUERY,
    },
    Target {
        name: "json",
        run: json,
        grammar: JSON,
    },
    Target {
        name: "cbor",
        run: cbor_body,
        grammar: CBOR,
    },
    Target {
        name: "rest-xml",
        run: rest_xml,
        grammar: XML,
    },
    Target {
        name: "rest-json",
        run: rest_json,
        grammar: JSON,
    },
    Target {
        name: "xml",
        run: xml_document,
        grammar: XML,
    },
    Target {
        name: "router",
        run: router,
        grammar: ROUTER,
    },
    Target {
        name: "presign",
        run: presign,
        grammar: ROUTER,
    },
    Target {
        name: "chunked",
        run: chunked,
        grammar: CHUNKED,
    },
    Target {
        name: "dynamodb-expression",
        run: dynamodb_expression,
        grammar: EXPRESSION,
    },
    Target {
        name: "partiql",
        run: partiql,
        grammar: PARTIQL,
    },
    Target {
        name: "logs-filter",
        run: logs_filter,
        grammar: FILTER,
    },
    Target {
        name: "logs-insights",
        run: logs_insights,
        grammar: INSIGHTS,
    },
    Target {
        name: "s3-select",
        run: s3_select,
        grammar: S3_SELECT,
    },
    Target {
        name: "event-pattern",
        run: event_pattern,
        grammar: JSON,
    },
    Target {
        name: "event-schedule",
        run: event_schedule,
        grammar: SCHEDULE,
    },
    Target {
        name: "scheduler-expression",
        run: scheduler_expression,
        grammar: SCHEDULE,
    },
    Target {
        name: "cloudwatch-alarm-rule",
        run: cloudwatch_alarm_rule,
        grammar: ALARM_RULE,
    },
    Target {
        name: "cloudwatch-metric-math",
        run: cloudwatch_metric_math,
        grammar: METRIC_MATH,
    },
    Target {
        name: "iam-policy",
        run: iam_policy,
        grammar: JSON,
    },
    Target {
        name: "jsonpath",
        run: jsonpath,
        grammar: JSONPATH,
    },
    Target {
        name: "vtl",
        run: vtl,
        grammar: VTL,
    },
    Target {
        name: "jsonata",
        run: jsonata,
        grammar: JSONATA,
    },
    Target {
        name: "yaml",
        run: yaml,
        grammar: YAML,
    },
    Target {
        name: "cfn-template",
        run: cfn_template,
        grammar: YAML,
    },
    Target {
        name: "apigatewayv2-openapi",
        run: apigatewayv2_openapi,
        grammar: JSON,
    },
    Target {
        name: "apigateway-openapi",
        run: apigateway_openapi,
        grammar: JSON,
    },
    Target {
        name: "sfn-intrinsic",
        run: sfn_intrinsic,
        grammar: INTRINSIC,
    },
    Target {
        name: "sfn-definition",
        run: sfn_definition,
        grammar: JSON,
    },
    Target {
        name: "firehose-prefix",
        run: firehose_prefix,
        grammar: FIREHOSE,
    },
];

/// The target called `name`.
pub fn target(name: &str) -> Option<&'static Target> {
    TARGETS.iter().find(|t| t.name == name)
}

const QUERY: Grammar = Grammar {
    dictionary: &[
        "Action=",
        "&",
        "=",
        ".member.",
        ".entry.",
        ".1",
        ".key",
        ".value",
        "%",
        "%C3%A9",
        "+",
        "Version=",
        "Attributes.entry.1.value=",
        "Content-Type: application/x-www-form-urlencoded\n",
    ],
    nesting: &[(".member.1", ""), ("%25", "")],
};
const CBOR: Grammar = Grammar {
    dictionary: &[
        "StreamName",
        "Records",
        "Data",
        "PartitionKey",
        "Timestamp",
        "ShardFilter",
        "\u{1b}",
        "\u{1f}",
        "\u{18}",
        "\u{7f}",
        "a",
    ],
    nesting: &[],
};

const YAML: Grammar = Grammar {
    dictionary: &[
        "\n",
        "\n  ",
        "- ",
        ": ",
        "? ",
        "---\n",
        "...\n",
        "&a ",
        "*a",
        "!Ref ",
        "!Sub ",
        "!GetAtt a.b",
        "!!str ",
        "!!int ",
        "|\n  ",
        ">-\n  ",
        "'",
        "\"",
        "#",
        "{",
        "}",
        "[",
        "]",
        ",",
        "~",
        "0x1f",
        ".inf",
        "%YAML 1.2\n",
        "%TAG ! tag:x,2000:\n",
        "\t",
    ],
    nesting: &[
        ("[", "]"),
        ("{a: ", "}"),
        ("- ", ""),
        ("a:\n ", ""),
        ("&a [*a, ", "]"),
    ],
};

const JSON: Grammar = Grammar {
    dictionary: &[
        "{",
        "}",
        "[",
        "]",
        "\"",
        ":",
        ",",
        "null",
        "true",
        "-1e999",
        "\"\\u0000\"",
        "{\"S\":\"x\"}",
        "{\"L\":[",
        "{\"M\":{\"a\":",
        "\"$or\":[",
        "\"Statement\":",
        "\"Effect\":\"Allow\"",
        "\"Condition\":",
        "\"prefix\":",
        "\"numeric\":[\">\",1]",
        "\"anything-but\":",
        "\"wildcard\":\"*a*\"",
    ],
    nesting: &[
        ("[", "]"),
        ("{\"a\":", "}"),
        ("{\"L\":[", "]}"),
        ("{\"$or\":[{\"a\":", "]}]}"),
    ],
};
const XML: Grammar = Grammar {
    dictionary: &[
        "<",
        ">",
        "</",
        "/>",
        "<?xml version=\"1.0\"?>",
        "&amp;",
        "&#x0;",
        "<![CDATA[",
        "]]>",
        "xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"",
        "<Tagging><TagSet><Tag><Key>k</Key><Value>v</Value></Tag></TagSet></Tagging>",
        "<Rule>",
        "<Filter>",
        "<And>",
        "PUT /b?tagging HTTP/1.1\n",
    ],
    nesting: &[("<a>", "</a>"), ("<Tag>", "</Tag>"), ("<And>", "</And>")],
};
const ROUTER: Grammar = Grammar {
    dictionary: &[
        "/",
        "?",
        "&",
        "=",
        "%",
        "%2F",
        "%C3%A9",
        "..",
        "X-Amz-Date=",
        "X-Amz-Expires=",
        "X-Amz-Credential=",
        "AWSAccessKeyId=",
        "Expires=",
        "Authorization: AWS4-HMAC-SHA256 Credential=",
        "X-Amz-Target: ",
        "Host: b.s3.localhost\n",
        "20260101T000000Z",
        "9223372036854775807",
    ],
    nesting: &[("/", ""), ("%25", "")],
};
const CHUNKED: Grammar = Grammar {
    dictionary: &[
        "\r\n",
        ";chunk-signature=",
        "0\r\n",
        "ffffffffffffffff",
        "x-amz-checksum-crc32:",
        "x-amz-trailer-signature:",
        "\r\n\r\n",
    ],
    nesting: &[("1\r\na\r\n", "")],
};
const EXPRESSION: Grammar = Grammar {
    dictionary: &[
        "(",
        ")",
        " AND ",
        " OR ",
        "NOT ",
        " = ",
        " <> ",
        " < ",
        " BETWEEN ",
        " IN ",
        ",",
        ".",
        "[0]",
        "#a",
        "#n",
        ":s",
        ":n",
        ":l",
        ":m",
        ":ss",
        "size(",
        "attribute_exists(",
        "begins_with(",
        "contains(",
        "if_not_exists(",
        "list_append(",
        "SET ",
        "REMOVE ",
        "ADD ",
        "DELETE ",
        " + ",
        " - ",
        "\u{e9}",
    ],
    nesting: &[
        ("(", ")"),
        ("NOT ", ""),
        ("size(", ")"),
        ("if_not_exists(a, ", ")"),
        ("list_append(", ", :l)"),
        ("a = a + ", ""),
    ],
};
const PARTIQL: Grammar = Grammar {
    dictionary: &[
        "SELECT * FROM ",
        "\"t\"",
        " WHERE ",
        " AND ",
        " OR ",
        "NOT ",
        "(",
        ")",
        "[",
        "]",
        "{",
        "}",
        "<<",
        ">>",
        "'x'",
        "?",
        " = ",
        " IS MISSING",
        " IN [",
        "UPDATE t SET ",
        "DELETE FROM t",
        "INSERT INTO t VALUE ",
        "list_append(",
        "size(",
        " RETURNING ALL OLD *",
    ],
    nesting: &[
        ("(", ")"),
        ("NOT ", ""),
        ("[", "]"),
        ("{'a':", "}"),
        ("<<", ">>"),
        ("list_append(a, ", ")"),
    ],
};
const FILTER: Grammar = Grammar {
    dictionary: &[
        "{",
        "}",
        "(",
        ")",
        "$.",
        "[0]",
        " = ",
        " != ",
        " && ",
        " || ",
        " IS NULL",
        " NOT EXISTS",
        "\"",
        "*",
        "[",
        "]",
        ",",
        "...",
        "?",
        "-",
    ],
    nesting: &[("(", ")"), ("$.a[0]", "")],
};
const JSONATA: Grammar = Grammar {
    dictionary: &[
        "$",
        "$$",
        ".",
        "*",
        "**",
        "%",
        "#$i",
        "@$v",
        "[]",
        "^(",
        ">",
        "<",
        "..",
        ":=",
        "~>",
        "?",
        ":",
        "?:",
        "??",
        "&",
        "and",
        "or",
        "in",
        "=",
        "!=",
        "function($x){",
        "}",
        "$map(",
        "$reduce(",
        "$sort(",
        "$string(",
        "$substring(",
        "$replace(",
        "$match(",
        "/a+/i",
        "|",
        ",",
        ";",
        "\"",
        "'",
        "`",
        "1e308",
        "-",
        "$eval(",
        "$formatNumber(",
        "$fromMillis(",
        "$partition(",
        "$range(",
    ],
    nesting: &[
        ("(", ")"),
        ("[", "]"),
        ("{", "}"),
        ("function($f){", "}"),
        ("$f(", ")"),
    ],
};

const SCHEDULE: Grammar = Grammar {
    dictionary: &[
        "rate(",
        "cron(",
        "at(",
        "T",
        ":",
        ")",
        " ",
        "*",
        "?",
        ",",
        "-",
        "/",
        "L",
        "W",
        "#",
        "minutes",
        "days",
        "JAN",
        "SUN",
        "9223372036854775807",
        "4294967295",
        "0-59",
        "1970-2199",
    ],
    nesting: &[("1,", ""), ("0-59/", "")],
};
const ALARM_RULE: Grammar = Grammar {
    dictionary: &[
        "ALARM(",
        "OK(",
        "INSUFFICIENT_DATA(",
        ")",
        "\"",
        "\\\"",
        " AND ",
        " OR ",
        "NOT ",
        "TRUE",
        "FALSE",
        "arn:aws:cloudwatch:us-east-1:000000000000:alarm:",
    ],
    nesting: &[("(", ")"), ("NOT (", ")")],
};
const METRIC_MATH: Grammar = Grammar {
    dictionary: &[
        "m1",
        "m2",
        " + ",
        " - ",
        " * ",
        " / ",
        " ^ ",
        " == ",
        " != ",
        " <= ",
        " > ",
        " AND ",
        " || ",
        "NOT ",
        "!",
        ", ",
        "SUM(",
        "AVG(",
        "STDDEV(",
        "METRICS()",
        "METRICS('Err')",
        "FILL(",
        "REPEAT",
        "LINEAR",
        "RATE(",
        "DIFF(",
        "IF(",
        "ABS(",
        "SEARCH('{App,Host} MetricName=\"Latency\"', 'Sum', 60)",
        "TIME_SERIES(",
        "1.5e3",
        "0",
    ],
    nesting: &[("(", ")"), ("FILL(", ", 0)"), ("IF(m1 > 1, ", ")")],
};
const FIREHOSE: Grammar = Grammar {
    dictionary: &[
        "!{",
        "}",
        "timestamp:",
        "yyyy",
        "MM",
        "'-'",
        "''",
        "firehose:error-output-type",
        "firehose:random-string",
        "partitionKeyFromQuery:",
        "partitionKeyFromLambda:",
        "{",
        ":",
        ".a",
        ".\"b c\"",
        "[0]",
        "[\"k\"]",
        ",",
        "|",
    ],
    nesting: &[("{a: .a", "}"), ("[", "]"), ("!{timestamp:'", "'}")],
};

const JSONPATH: Grammar = Grammar {
    dictionary: &[
        "$",
        "$$",
        "@",
        ".",
        "..",
        "*",
        "[",
        "]",
        "[*]",
        "[0]",
        "[-1]",
        "[1:]",
        "[::-1]",
        "['a']",
        "[\"b\"]",
        "[0,1]",
        "['a','b']",
        "[?(",
        ")]",
        "@.a",
        " == ",
        " != ",
        " < ",
        " >= ",
        " && ",
        " || ",
        "!",
        "'x'",
        "1.5e3",
        "true",
        "null",
        ".length()",
        ".sum()",
        "\\u00e9",
        "-9223372036854775808",
        " =~ /.*a(b|c)*/i",
        " in ['a', 1]",
        " nin [",
        " subsetof ",
        " anyof ",
        " size 2",
        " empty true",
    ],
    nesting: &[("[?(", ")]"), ("(", ")"), ("!", ""), ("[?(@.a", " == 1)]")],
};
const VTL: Grammar = Grammar {
    dictionary: &[
        "#set($a = ",
        "#if(",
        "#elseif(",
        "#else",
        "#end",
        "#{end}",
        "#foreach($i in ",
        "#break",
        "#stop",
        "#define($d)",
        "#macro(m $p)",
        "#m(1)",
        "$a",
        "$!a",
        "${a}",
        "$!{a}",
        "$a.b",
        "$a[0]",
        "$a.size()",
        "$foreach.hasNext",
        "$velocityCount",
        "$input.json('$.a')",
        "$input.path('$')",
        "$input.params()",
        "$input.params('id')",
        "$input.body",
        "$util.escapeJavaScript(",
        "$util.parseJson('[1]')",
        "$util.urlDecode('%",
        "[1..3]",
        "[1, 'a']",
        "{'k': 1}",
        "\"$a\"",
        "'x'",
        "##",
        "#*",
        "*#",
        "#[[",
        "]]#",
        " == ",
        " && ",
        " || ",
        "!",
        " + ",
        " / ",
        " % ",
        "-9223372036854775808",
        "1.5",
        "\\",
        "\n",
        "$context.requestOverride.header.X",
        ".substring(",
        ".replaceAll('(a*)*', '$1')",
        ".split(",
        ".matches(",
        ")",
    ],
    nesting: &[
        ("#if(true)", "#end"),
        ("#foreach($i in [1..3])", "#end"),
        ("(", ")"),
        ("[", "]"),
        ("\"$a", "\""),
        ("!", ""),
        ("$a.get(", ")"),
    ],
};
const INTRINSIC: Grammar = Grammar {
    dictionary: &[
        "States.Format(",
        "States.Array(",
        "States.ArrayRange(",
        "States.ArrayPartition(",
        "States.StringToJson(",
        "States.JsonMerge(",
        "States.Hash(",
        "States.MathRandom(",
        "States.UUID()",
        ")",
        ", ",
        "'{}'",
        "'\\{'",
        "'\\''",
        "$.a",
        "$.a[0]",
        "$$.Execution.Id",
        "-1",
        "1e308",
        "true",
        "null",
        "'SHA-256'",
    ],
    nesting: &[
        ("States.Array(", ")"),
        ("States.JsonToString(", ")"),
        ("'", "'"),
    ],
};
const S3_SELECT: Grammar = Grammar {
    dictionary: &[
        "SELECT ",
        " FROM S3Object s",
        "S3Object[*].",
        " WHERE ",
        " LIMIT 1",
        " AND ",
        " OR ",
        "NOT ",
        " LIKE '%a_'",
        " ESCAPE '!'",
        " BETWEEN 1 AND 2",
        " IN (1, 'a')",
        " IS NOT MISSING",
        " IS NULL",
        "CAST(",
        " AS INT)",
        "TRIM(LEADING 'x' FROM ",
        "SUBSTRING(",
        " FOR 2)",
        "COUNT(*)",
        "SUM(",
        "s._1",
        "s.name",
        "\"",
        "'",
        "[0]",
        "[*]",
        " || ",
        "-",
        "9223372036854775807",
    ],
    nesting: &[
        ("(", ")"),
        ("NOT ", ""),
        ("-", ""),
        ("LOWER(", ")"),
        ("[", "]"),
    ],
};
const INSIGHTS: Grammar = Grammar {
    dictionary: &[
        "fields ",
        "filter ",
        "stats ",
        "sort ",
        "limit ",
        "parse ",
        "display ",
        " | ",
        "(",
        ")",
        " and ",
        " or ",
        "not ",
        " like ",
        "/a.*/",
        "\"",
        "count(*)",
        " by ",
        "bin(5m)",
        "@message",
        "@timestamp",
        " =~ ",
        " in [",
        "abs(",
        "concat(",
    ],
    nesting: &[("(", ")"), ("not ", ""), ("abs(", ")"), ("concat(", ",1)")],
};

/// The pieces of a request written as text.
struct Raw<'a> {
    method: Method,
    target: &'a str,
    headers: HeaderMap,
    body: &'a [u8],
}

/// Reads `METHOD target`, `Name: value` lines and, after a blank line, the body.
fn raw(input: &[u8]) -> Raw<'_> {
    let (head, body) = match input.windows(2).position(|w| w == b"\n\n") {
        Some(at) => (&input[..at], &input[at + 2..]),
        None => (input, &[][..]),
    };
    let head = std::str::from_utf8(head).unwrap_or_default();
    let mut lines = head.lines();
    let first = lines.next().unwrap_or_default();
    let (method, target) = first.split_once(' ').unwrap_or(("GET", first));
    let mut headers = HeaderMap::new();
    for line in lines {
        let Some((name, value)) = line.split_once(':') else {
            continue;
        };
        if let (Ok(n), Ok(v)) = (
            HeaderName::from_bytes(name.trim().as_bytes()),
            HeaderValue::from_str(value.trim()),
        ) {
            headers.append(n, v);
        }
    }
    Raw {
        method: Method::from_bytes(method.as_bytes()).unwrap_or(Method::GET),
        target,
        headers,
        body,
    }
}

impl Raw<'_> {
    /// The request as the codecs take it.
    fn wire(&self) -> WireRequest<'_> {
        let (path, query) = self.target.split_once('?').unwrap_or((self.target, ""));
        WireRequest {
            method: &self.method,
            path,
            query,
            headers: &self.headers,
            body: self.body,
        }
    }
}

/// Resolves and decodes `input` as a request to each named service.
fn decode_as(input: &[u8], services: &[&str]) {
    let raw = raw(input);
    let req = raw.wire();
    for service in services {
        let m = model(service);
        let protocol = Protocol::of(m);
        if let Ok(resolved) = protocol.resolve(m, &req) {
            let _ = protocol.decode(m, &resolved, &req);
        }
    }
}

fn query(input: &[u8]) {
    decode_as(input, &["sns", "sqs-query", "iam", "sts"]);
}

fn json(input: &[u8]) {
    decode_as(
        input,
        &[
            "dynamodb",
            "dynamodbstreams",
            "logs",
            "events",
            "kms",
            "sqs",
            "ssm",
            "secretsmanager",
        ],
    );
}

/// The CBOR reader, Kinesis' input shapes read from what it parses, and what they encode
/// back to, which must parse again.
fn cbor_body(input: &[u8]) {
    use roto_core::protocol::cbor::{self, Dialect};
    let Ok(item) = cbor::parse(input) else {
        return;
    };
    let m = model("kinesis");
    for op in [
        "PutRecords",
        "GetShardIterator",
        "ListShards",
        "SubscribeToShard",
    ] {
        let Some(input_ref) = m.operation(op).and_then(|o| o.input.as_ref()) else {
            continue;
        };
        let shape = m.resolve(input_ref);
        for dialect in [Dialect::Millis, Dialect::Seconds] {
            if let Ok(value) = cbor::decode_value(m, shape, &item, "", dialect) {
                let mut out = Vec::new();
                cbor::encode_value(m, shape, &value, dialect, &mut out);
                assert!(
                    cbor::parse(&out).is_ok(),
                    "{op} encodes what it cannot read"
                );
            }
        }
    }
}

fn rest_xml(input: &[u8]) {
    decode_as(input, &["s3"]);
}

fn rest_json(input: &[u8]) {
    decode_as(input, &["lambda"]);
}

/// The XML reader, and the S3 configuration shapes read from what it parses.
fn xml_document(input: &[u8]) {
    let Ok(element) = xml::parse(input) else {
        return;
    };
    let m = model("s3");
    for shape in [
        "Tagging",
        "Delete",
        "BucketLifecycleConfiguration",
        "NotificationConfiguration",
        "CORSConfiguration",
        "ReplicationConfiguration",
    ] {
        let _ = xml::read_structure(m, m.shape(shape), &element);
    }
}

/// How a request finds its service, operation and account: every model's routing, the
/// access key's account and the header timestamps.
fn router(input: &[u8]) {
    let raw = raw(input);
    let req = raw.wire();
    for service in [
        "s3",
        "lambda",
        "dynamodb",
        "sns",
        "sqs",
        "sqs-query",
        "logs",
        "iam",
        "sts",
    ] {
        let m = model(service);
        let _ = Protocol::of(m).resolve(m, &req);
    }
    for value in raw.headers.values() {
        if let Ok(text) = value.to_str() {
            let _ = roto_core::timestamp::parse(text);
            let _ = roto_core::identity::account_of_access_key(text);
        }
    }
}

/// A query string as presigned URLs carry it: its expiry, the signature it claims, and the
/// canonical forms `--verify-signatures` builds from it.
fn presign(input: &[u8]) {
    use roto_core::signature;
    let text = String::from_utf8_lossy(input);
    let _ = roto_core::presign::check_query(&text, 1_767_225_600_000);
    let headers = http::HeaderMap::new();
    let _ = signature::claim(&headers, &text);
    let request = signature::V4Request {
        method: &http::Method::GET,
        path: &text,
        query: &text,
        headers: &headers,
        host: "h",
        path_as_sent: false,
        payload_hash: signature::UNSIGNED_PAYLOAD,
    };
    let _ = signature::canonical_request(&request, &["host".to_string()]);
    let _ = signature::string_to_sign_v2(&http::Method::GET, &headers, "/b/k", &text, None);
}

/// Every `aws-chunked` framing, decoded whole and in two pieces split by the first byte.
fn chunked(input: &[u8]) {
    let split = input
        .first()
        .map_or(0, |b| usize::from(*b))
        .min(input.len());
    for header in [
        "STREAMING-UNSIGNED-PAYLOAD-TRAILER",
        "STREAMING-AWS4-HMAC-SHA256-PAYLOAD",
        "STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER",
        "STREAMING-AWS4-ECDSA-P256-SHA256-PAYLOAD-TRAILER",
    ] {
        let Some(kind) = ChunkedKind::from_headers(Some(header), None) else {
            continue;
        };
        let _ = ChunkedDecoder::new(kind).decode_all(input);
        let mut decoder = ChunkedDecoder::new(kind).with_decoded_length(input.len() as u64);
        let mut out = Vec::new();
        if decoder.decode(&input[..split], &mut out).is_ok()
            && decoder.decode(&input[split..], &mut out).is_ok()
        {
            let _ = decoder.finish();
        }
    }
}

fn text(input: &[u8]) -> std::borrow::Cow<'_, str> {
    String::from_utf8_lossy(input)
}

/// A YAML document read with every local tag kept as a `{"Fn::Tag": value}` object.
fn yaml(input: &[u8]) {
    let _ = roto_yaml::parse_with(&text(input), |tag, value| {
        Ok(serde_json::json!({ format!("Fn::{tag}"): value }))
    });
}

/// A CloudFormation template read, checked and evaluated as CreateStack would.
fn cfn_template(input: &[u8]) {
    roto_services::cloudformation::fuzz::fuzz_template(&text(input));
}

fn dynamodb_expression(input: &[u8]) {
    roto_services::dynamodb::fuzz::fuzz_expressions(&text(input));
}

fn partiql(input: &[u8]) {
    roto_services::dynamodb::fuzz::fuzz_partiql(&text(input));
}

/// HTTP APIs' OpenAPI import, route matching over what it imports, and JWT reading.
fn apigatewayv2_openapi(input: &[u8]) {
    roto_services::apigateway::v2::fuzz::fuzz_openapi(&text(input));
}

/// REST APIs' OpenAPI and Swagger import, and the export of what it imports.
fn apigateway_openapi(input: &[u8]) {
    roto_services::apigateway::fuzz::fuzz_rest_openapi(&text(input));
}

fn s3_select(input: &[u8]) {
    roto_services::s3::fuzz::fuzz_select(&text(input));
}

fn logs_filter(input: &[u8]) {
    roto_services::logs::fuzz::fuzz_filter_pattern(&text(input));
}

fn logs_insights(input: &[u8]) {
    roto_services::logs::fuzz::fuzz_insights_query(&text(input));
}

/// Event patterns and both kinds of filter policy, matched against fixed events.
fn event_pattern(input: &[u8]) {
    let events = [
        serde_json::json!({"source": "app", "detail": {"n": 5, "s": "abc", "ip": "10.0.0.1", "l": [1, "a", null], "m": {"k": true}}}),
        serde_json::json!({"a": [[["x"]]], "b": -1.5e10}),
    ];
    for dialect in [
        Dialect::EventBridge,
        Dialect::SnsBody,
        Dialect::SnsAttributes,
    ] {
        if let Ok(pattern) = Pattern::parse(&text(input), dialect) {
            for event in &events {
                pattern.matches(event);
            }
        }
    }
}

fn event_schedule(input: &[u8]) {
    roto_services::events::fuzz::fuzz_schedule_expression(&text(input));
}

/// A Firehose custom prefix parsed and evaluated, and the same text read as a dynamic
/// partitioning query and run over a fixed record.
fn firehose_prefix(input: &[u8]) {
    use roto_services::firehose::{partition::Query, prefix};
    let text = text(input);
    if let Ok(template) = prefix::Template::parse(&text) {
        let keys = std::collections::BTreeMap::from([("a".to_string(), "1".to_string())]);
        let facts = prefix::Facts {
            time: 1_796_230_800_123,
            error_output_type: Some("processing-failed"),
            partition_keys: &keys,
        };
        template.evaluate(&facts);
    }
    if let Ok(query) = Query::parse(&text) {
        let _ = query.extract(br#"{"a": {"b c": [1, {"k": "v"}]}, "x": true}"#);
    }
}

/// A Scheduler expression parsed and its next occurrences found in a zone with DST.
fn scheduler_expression(input: &[u8]) {
    roto_services::scheduler::fuzz::fuzz_schedule_expression(&text(input));
}

/// A composite alarm rule parsed and evaluated.
fn cloudwatch_alarm_rule(input: &[u8]) {
    roto_services::cloudwatch::fuzz::fuzz_alarm_rule(&text(input));
}

/// A metric math expression parsed and evaluated.
fn cloudwatch_metric_math(input: &[u8]) {
    roto_services::cloudwatch::fuzz::fuzz_metric_math(&text(input));
}

/// A JSONPath parsed, then selected, evaluated and set over a fixed document.
fn jsonpath(input: &[u8]) {
    let Ok(path) = roto_jsonpath::Path::parse(&text(input)) else {
        return;
    };
    let mut doc = serde_json::json!({
        "a": [1, {"a": [2, "x", null]}, [true, 1.5]],
        "b": {"c": {"d": "e"}, "": 0},
        "x": "text"
    });
    path.select(&doc);
    path.get(&doc);
    path.evaluate(&doc);
    let _ = path.set(&mut doc, serde_json::Value::Null);
}

/// A Velocity template parsed, then rendered over a small request.
fn vtl(input: &[u8]) {
    let Ok(template) = roto_vtl::Template::parse(&text(input)) else {
        return;
    };
    let pair = |k: &str, v: &str| (k.to_string(), v.to_string());
    let mut ctx = roto_vtl::Context::new(roto_vtl::Input {
        body: r#"{"a": [1, {"b": "x"}], "s": "t\u00e9xt"}"#.to_string(),
        path_params: vec![pair("id", "1")],
        query_params: vec![pair("q", "a b")],
        headers: vec![pair("Accept", "*/*")],
    });
    ctx.set(
        "context",
        serde_json::json!({"requestId": "r", "identity": {}}),
    );
    ctx.set("stageVariables", serde_json::json!({"env": "dev"}));
    let _ = template.render(&mut ctx);
}

/// Parses the input as a JSONata expression and evaluates it over a small document, with
/// Step Functions' functions bound.
fn jsonata(input: &[u8]) {
    let Ok(expr) = roto_jsonata::Expression::parse(&text(input)) else {
        return;
    };
    let doc = serde_json::json!({"a": [1, {"b": "x"}, [2, 3]], "c": {"d": null, "e": true}});
    let _ = expr.evaluate(&doc, &roto_jsonata::Environment::with_step_functions());
}

fn sfn_intrinsic(input: &[u8]) {
    roto_services::stepfunctions::fuzz::fuzz_intrinsic(&text(input));
}

fn sfn_definition(input: &[u8]) {
    roto_services::stepfunctions::fuzz::fuzz_definition(&text(input));
}

fn iam_policy(input: &[u8]) {
    roto_services::iam::fuzz::fuzz_policy_document(&text(input));
}
