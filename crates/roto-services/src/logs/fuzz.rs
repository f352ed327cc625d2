//! Entry points for the fuzzer (`crates/roto-fuzz`): filter patterns and Insights queries
//! parsed and run over fixed messages. They exist so the fuzzer can reach private modules;
//! nothing in the server calls them.

use super::filter::Pattern;
use super::insights::{add_json_fields, Datum, Query, Record};

const MESSAGES: [&str; 3] = [
    r#"{"level":"error","code":503,"user":{"id":"u1","tags":["a","b"]},"ok":true,"none":null}"#,
    "127.0.0.1 - - [10/Oct/2000:13:55:36 -0700] \"GET /a.gif HTTP/1.0\" 200 2326",
    "ERROR something failed: timeout after 30s",
];

/// Parses `text` as a filter pattern and matches and extracts over fixed messages.
pub fn fuzz_filter_pattern(text: &str) {
    if let Ok(pattern) = Pattern::parse(text) {
        for message in MESSAGES {
            pattern.matches(message);
            pattern.extract(message);
        }
    }
}

/// Parses `text` as an Insights query and runs it over fixed records.
pub fn fuzz_insights_query(text: &str) {
    let Ok(query) = Query::parse(text) else {
        return;
    };
    let records = MESSAGES
        .iter()
        .zip(0i64..)
        .map(|(message, i)| {
            let mut record = Record::new();
            record.insert(
                "@timestamp".into(),
                Datum::Time(1_700_000_000_000 + i * 1000),
            );
            record.insert("@message".into(), Datum::Str(message.to_string()));
            record.insert("@ptr".into(), Datum::Str(format!("p{i}")));
            add_json_fields(&mut record, message);
            record
        })
        .collect();
    query.run(records, 100);
}
