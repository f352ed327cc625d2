//! Entry point for the fuzzer (`crates/roto-fuzz`): S3 Select expressions parsed and run
//! over fixed CSV and JSON records. It exists so the fuzzer can reach the private parser
//! and evaluator; nothing in the server calls it.

use super::eval::{eval, Datum, Scope};
use super::input::{json_documents, CsvInput, Window};
use super::sql::parse;

const CSV: &[u8] = b"name,age,city\nAlice,31,\"Paris, FR\"\n# comment\nBob,,Oslo\n";
const JSON: &[u8] =
    br#"{"name":"Alice","age":31,"tags":["a","b"],"nested":{"x":1.5}} {"name":null}"#;

/// Parses `text` as an S3 Select expression and evaluates it over fixed records.
pub fn fuzz_select(text: &str) {
    let Ok(query) = parse(text) else {
        return;
    };
    let csv = CsvInput {
        header: "USE".into(),
        ..CsvInput::default()
    };
    let mut records = Vec::new();
    let mut window = Window::new(CSV, 0);
    while let Ok(Some((fields, _))) = csv.record(&mut window) {
        records.push(Datum::Struct(
            fields
                .into_iter()
                .enumerate()
                .map(|(i, f)| (format!("_{}", i + 1), Datum::Str(f)))
                .collect(),
        ));
    }
    records.extend(json_documents(JSON).filter_map(Result::ok));
    for record in &records {
        let scope = Scope {
            record,
            alias: query.alias.as_deref(),
            now: 0,
        };
        if let Some(filter) = &query.filter {
            let _ = eval(filter, &scope);
        }
        for item in query.items.iter().flatten() {
            let _ = eval(&item.expr, &scope);
        }
    }
}
