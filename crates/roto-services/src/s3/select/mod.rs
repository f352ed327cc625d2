//! SelectObjectContent (S3 Select): an SQL expression run over one object's CSV or JSON
//! records, answered as an event stream of `Records`, `Progress` (when asked), `Stats`
//! and `End` messages in roto-core's [`eventstream`] framing.
//!
//! `sql.rs` parses the expression, `eval.rs` evaluates it over a record, `input.rs` reads
//! the records; this file checks the request as S3 does, runs the query on a blocking
//! thread over the object's blob (streamed, or whole when GZIP- or BZIP2-compressed) and streams
//! the results as they come. An error found before the first result is the HTTP error
//! S3 answers; one found later ends the stream with an error message, as S3 does.

mod eval;
pub mod fuzz;
mod input;
mod sql;
mod time;

use std::io::{Cursor, Read, Seek, SeekFrom};

use bytes::Bytes;
use roto_core::protocol::xml::XmlWriter;
use roto_core::store::BlobReader;
use roto_core::{eventstream, AwsError, AwsResult, Response, Value};
use tokio::sync::mpsc;

use self::eval::{eval, truth, Accumulator, Datum, Scope};
use self::input::{CsvInput, Window};
use self::sql::{error, Expr, Query, Step};
use super::versions::Found;
use super::{errors, input_str, restore, sse, S3};

/// How much output one `Records` message carries at most.
const RECORDS_CHUNK: usize = 64 * 1024;
/// The largest compressed object's data read into memory to decompress.
const MAX_INFLATED: usize = 1 << 30;

/// What the request asks for, checked.
struct Plan {
    query: Query,
    format: Format,
    compression: Compression,
    output: Output,
    progress: bool,
    range: Option<ScanRange>,
}

/// `ScanRange`: from `Start` to `End` (inclusive), or only `End`: the last `End` bytes.
#[derive(Clone, Copy)]
enum ScanRange {
    From(u64, Option<u64>),
    Last(u64),
}

impl ScanRange {
    /// The first and last byte offsets of records kept, in an object of `size` bytes.
    fn bounds(range: Option<ScanRange>, size: u64) -> (u64, u64) {
        match range {
            None => (0, u64::MAX),
            Some(ScanRange::From(start, end)) => (start, end.unwrap_or(u64::MAX)),
            Some(ScanRange::Last(n)) => (size.saturating_sub(n), u64::MAX),
        }
    }
}

/// `CompressionType`.
#[derive(Clone, Copy, PartialEq)]
enum Compression {
    None,
    Gzip,
    Bzip2,
}

impl Compression {
    /// The object's data decompressed, at most [`MAX_INFLATED`] bytes of it.
    fn inflate(self, compressed: &[u8]) -> AwsResult<Vec<u8>> {
        let data = match self {
            Compression::None => return Ok(compressed.to_vec()),
            Compression::Gzip => crate::gzip::decompress_within(compressed, MAX_INFLATED).ok(),
            Compression::Bzip2 => {
                let mut data = Vec::new();
                bzip2::read::MultiBzDecoder::new(compressed)
                    .take(MAX_INFLATED as u64 + 1)
                    .read_to_end(&mut data)
                    .ok()
                    .filter(|_| data.len() <= MAX_INFLATED)
                    .map(|_| data)
            }
        };
        data.ok_or_else(unsupported_compression)
    }
}

fn unsupported_compression() -> AwsError {
    error(
        "InvalidCompressionFormat",
        "The file is not in a supported compression format. Only GZIP and BZIP2 are supported.",
    )
}

enum Format {
    Csv(CsvInput),
    JsonDocument,
    JsonLines,
}

/// Output serialization (`CSVOutput` or `JSONOutput`).
enum Output {
    Csv {
        always_quote: bool,
        escape: String,
        record: String,
        field: String,
        quote: String,
    },
    Json {
        record: String,
    },
}

/// The settings member `name` of `shape`, or `default`.
fn setting(shape: Option<&Value>, name: &str, default: &str) -> String {
    shape
        .and_then(|s| s.str(name))
        .unwrap_or(default)
        .to_string()
}

fn plan(input: &Value) -> AwsResult<Plan> {
    if input.str("ExpressionType") != Some("SQL") {
        return Err(error(
            "InvalidExpressionType",
            "The ExpressionType is invalid. Only SQL expressions are supported.",
        ));
    }
    let query = sql::parse(input_str(input, "Expression"))?;
    let serialization = input.get("InputSerialization");
    let formats: Vec<&str> = ["CSV", "JSON", "Parquet"]
        .into_iter()
        .filter(|f| serialization.and_then(|s| s.get(f)).is_some())
        .collect();
    let compression = match serialization.and_then(|s| s.str("CompressionType")) {
        None | Some("NONE") => Compression::None,
        Some("GZIP") => Compression::Gzip,
        Some("BZIP2") => Compression::Bzip2,
        Some(_) => return Err(unsupported_compression()),
    };
    let format = match formats.as_slice() {
        ["CSV"] => Format::Csv(csv_input(serialization.and_then(|s| s.get("CSV")))?),
        ["JSON"] => match serialization
            .and_then(|s| s.get("JSON"))
            .and_then(|j| j.str("Type"))
        {
            Some("DOCUMENT") => Format::JsonDocument,
            Some("LINES") => Format::JsonLines,
            _ => {
                return Err(error(
                    "InvalidJsonType",
                    "The JsonType is invalid. Only DOCUMENT and LINES are supported.",
                ))
            }
        },
        ["Parquet"] => {
            return Err(error(
                "ParquetParsingError",
                "Error parsing the Parquet file: Roto reads CSV and JSON objects only.",
            ))
        }
        [] => return Err(error(
            "MissingRequiredParameter",
            "The SelectRequest entity is missing a required parameter: InputSerialization format.",
        )),
        _ => return Err(conflict()),
    };
    let output = output(input.get("OutputSerialization"))?;
    let range = scan_range(input.get("ScanRange"))?;
    let compressed = compression != Compression::None;
    if range.is_some() && (compressed || matches!(format, Format::JsonDocument)) {
        return Err(error(
            "UnsupportedScanRangeInput",
            "Scan range queries are not supported on this type of object.",
        ));
    }
    Ok(Plan {
        query,
        format,
        compression,
        output,
        progress: input
            .get("RequestProgress")
            .and_then(|p| p.bool("Enabled"))
            .unwrap_or(false),
        range,
    })
}

fn conflict() -> AwsError {
    error(
        "ObjectSerializationConflict",
        "InputSerialization specifies more than one format (CSV, JSON, or Parquet), or OutputSerialization specifies more than one format (CSV or JSON). InputSerialization and OutputSerialization can only specify one format each.",
    )
}

fn csv_input(csv: Option<&Value>) -> AwsResult<CsvInput> {
    let header = setting(csv, "FileHeaderInfo", "NONE").to_ascii_uppercase();
    if !["USE", "IGNORE", "NONE"].contains(&header.as_str()) {
        return Err(error(
            "InvalidFileHeaderInfo",
            "The FileHeaderInfo is invalid. Only NONE, USE, and IGNORE are supported.",
        ));
    }
    let bytes = |name: &str, default: &str| setting(csv, name, default).into_bytes();
    let comments = bytes("Comments", "#");
    Ok(CsvInput {
        header,
        comments: (!comments.is_empty()).then_some(comments),
        quote_escape: bytes("QuoteEscapeCharacter", "\""),
        record_delimiter: bytes("RecordDelimiter", "\n"),
        field_delimiter: bytes("FieldDelimiter", ","),
        quote: bytes("QuoteCharacter", "\""),
        allow_quoted_record_delimiter: csv
            .and_then(|c| c.bool("AllowQuotedRecordDelimiter"))
            .unwrap_or(false),
    })
}

fn output(serialization: Option<&Value>) -> AwsResult<Output> {
    let csv = serialization.and_then(|s| s.get("CSV"));
    let json = serialization.and_then(|s| s.get("JSON"));
    match (csv, json) {
        (Some(_), Some(_)) => Err(conflict()),
        (None, Some(json)) => Ok(Output::Json {
            record: setting(Some(json), "RecordDelimiter", "\n"),
        }),
        (Some(csv), None) => {
            let always_quote = match csv.str("QuoteFields") {
                None | Some("ASNEEDED") => false,
                Some("ALWAYS") => true,
                Some(_) => {
                    return Err(error(
                        "InvalidQuoteFields",
                        "The QuoteFields is invalid. Only ALWAYS and ASNEEDED are supported.",
                    ))
                }
            };
            Ok(Output::Csv {
                always_quote,
                escape: setting(Some(csv), "QuoteEscapeCharacter", "\""),
                record: setting(Some(csv), "RecordDelimiter", "\n"),
                field: setting(Some(csv), "FieldDelimiter", ","),
                quote: setting(Some(csv), "QuoteCharacter", "\""),
            })
        }
        (None, None) => Err(error(
            "MissingRequiredParameter",
            "The SelectRequest entity is missing a required parameter: OutputSerialization format.",
        )),
    }
}

fn scan_range(range: Option<&Value>) -> AwsResult<Option<ScanRange>> {
    let Some(range) = range else {
        return Ok(None);
    };
    let invalid = || error("InvalidScanRange", "The provided scan range is invalid.");
    let number = |name: &str| -> AwsResult<Option<u64>> {
        range
            .int(name)
            .map(|n| u64::try_from(n).map_err(|_| invalid()))
            .transpose()
    };
    match (number("Start")?, number("End")?) {
        (Some(start), Some(end)) if start > end => Err(invalid()),
        (Some(start), end) => Ok(Some(ScanRange::From(start, end))),
        (None, Some(end)) => Ok(Some(ScanRange::Last(end))),
        (None, None) => Ok(None),
    }
}

impl Output {
    fn write(&self, names: &[String], values: &[Datum], out: &mut String) {
        match self {
            Output::Json { record } => {
                // A MISSING value leaves its member out, as S3 does.
                let members = names
                    .iter()
                    .zip(values)
                    .filter(|(_, v)| **v != Datum::Missing)
                    .map(|(n, v)| (n.clone(), v.clone()));
                Datum::Struct(members.collect()).write_json(out);
                out.push_str(record);
            }
            Output::Csv {
                always_quote,
                escape,
                record,
                field,
                quote,
            } => {
                for (i, value) in values.iter().enumerate() {
                    if i > 0 {
                        out.push_str(field);
                    }
                    let text = value.text();
                    let needs = *always_quote
                        || (!quote.is_empty()
                            && [field, record, quote]
                                .iter()
                                .any(|s| !s.is_empty() && text.contains(s.as_str())));
                    if needs {
                        out.push_str(quote);
                        out.push_str(&text.replace(quote.as_str(), &format!("{escape}{quote}")));
                        out.push_str(quote);
                    } else {
                        out.push_str(&text);
                    }
                }
                out.push_str(record);
            }
        }
    }
}

/// The counts S3 reports in `Stats` and `Progress`.
#[derive(Default, Clone, Copy)]
struct Counts {
    scanned: u64,
    processed: u64,
    returned: u64,
}

/// The results of a running query, sent as event stream messages: `Ok` messages, or an
/// error that ends the stream.
struct Sink {
    tx: mpsc::Sender<AwsResult<Bytes>>,
    buffer: String,
    output: Output,
    progress: bool,
    counts: Counts,
}

impl Sink {
    fn record(&mut self, names: &[String], values: &[Datum]) -> AwsResult<()> {
        self.output.write(names, values, &mut self.buffer);
        if self.buffer.len() >= RECORDS_CHUNK {
            self.flush()?;
        }
        Ok(())
    }

    fn flush(&mut self) -> AwsResult<()> {
        if self.buffer.is_empty() {
            return Ok(());
        }
        let payload = std::mem::take(&mut self.buffer);
        self.counts.returned += payload.len() as u64;
        self.send(eventstream::event(
            "Records",
            "application/octet-stream",
            payload.as_bytes(),
        ))?;
        if self.progress {
            self.send(counts_event("Progress", self.counts))?;
        }
        Ok(())
    }

    fn send(&self, message: Vec<u8>) -> AwsResult<()> {
        self.tx
            .blocking_send(Ok(Bytes::from(message)))
            .map_err(|_| AwsError::internal("the client left"))
    }

    fn finish(mut self) -> AwsResult<()> {
        self.flush()?;
        if self.progress {
            self.send(counts_event("Progress", self.counts))?;
        }
        self.send(counts_event("Stats", self.counts))?;
        self.send(eventstream::message(
            &[(":message-type", "event"), (":event-type", "End")],
            b"",
        ))
    }
}

/// A `Stats` or `Progress` event, its XML written by the model's shape.
fn counts_event(kind: &str, counts: Counts) -> Vec<u8> {
    let model = super::SPEC.model();
    let details = Value::map()
        .with("BytesScanned", counts.scanned as i64)
        .with("BytesProcessed", counts.processed as i64)
        .with("BytesReturned", counts.returned as i64);
    let mut xml = XmlWriter::default();
    xml.start(kind, &[]);
    xml.members(model, model.shape(kind), &details);
    xml.end(kind);
    eventstream::event(kind, "text/xml", xml.finish().as_bytes())
}

/// The error message that ends a stream.
fn error_message(error: &AwsError) -> Vec<u8> {
    eventstream::message(
        &[
            (":message-type", "error"),
            (":error-code", &error.code),
            (":error-message", &error.message),
        ],
        b"",
    )
}

impl S3 {
    pub(crate) async fn select_object_content(&self, input: &Value) -> AwsResult<Response> {
        let bucket = self.bucket(input_str(input, "Bucket"))?;
        let plan = plan(input)?;
        let key = input_str(input, "Key");
        let (found, blob) = self.open_version(&bucket.name, key, None, true)?;
        let Found::Object(row) = found else {
            return Err(errors::no_such_key(key));
        };
        sse::check_read(input, "", &row.headers)?;
        restore::check_readable(
            &row,
            "The operation is not valid for the object's storage class",
        )?;
        let blob = blob.unwrap_or(BlobReader::Memory(Vec::new()));
        let size = u64::try_from(row.size).unwrap_or(0);
        let (tx, mut rx) = mpsc::channel(4);
        tokio::task::spawn_blocking(move || {
            let error_tx = tx.clone();
            if let Err(e) = run(plan, blob, size, tx) {
                let _ = error_tx.blocking_send(Err(e));
            }
        });
        let first = match rx.recv().await {
            Some(first) => first?,
            None => return Err(AwsError::internal("the query ended without an answer")),
        };
        let (out, body) = eventstream::channel(4);
        tokio::spawn(async move {
            let mut next = Some(Ok(first));
            while let Some(item) = next {
                let message = match item {
                    Ok(message) => message,
                    Err(e) => Bytes::from(error_message(&e)),
                };
                if out.send(message).await.is_err() {
                    return;
                }
                next = rx.recv().await;
            }
        });
        let mut response = Response::new(Value::map()).with_body(Some(body));
        response
            .headers
            .push(("Content-Type".into(), eventstream::CONTENT_TYPE.into()));
        Ok(response)
    }
}

/// Runs the query over the blob, sending its messages.
fn run(
    plan: Plan,
    blob: BlobReader,
    size: u64,
    tx: mpsc::Sender<AwsResult<Bytes>>,
) -> AwsResult<()> {
    let mut reader: Box<dyn ReadSeek> = match blob {
        BlobReader::File(f) => Box::new(f),
        BlobReader::Memory(bytes) => Box::new(Cursor::new(bytes)),
    };
    let mut total = size;
    let compressed = plan.compression != Compression::None;
    if compressed {
        let mut raw = Vec::new();
        reader.read_to_end(&mut raw).map_err(input::read_error)?;
        let data = plan.compression.inflate(&raw)?;
        total = data.len() as u64;
        reader = Box::new(Cursor::new(data));
    }
    let mut sink = Sink {
        tx,
        buffer: String::new(),
        output: plan.output,
        progress: plan.progress,
        counts: Counts::default(),
    };
    let mut runner = Runner::new(&plan.query)?;
    let (start, end) = ScanRange::bounds(plan.range, size);
    let read = match &plan.format {
        Format::Csv(csv) => csv_records(csv, reader, (start, end), &mut runner, &mut sink)?,
        Format::JsonLines => json_lines(reader, (start, end), &mut runner, &mut sink)?,
        Format::JsonDocument => {
            let mut counter = Counter {
                inner: reader,
                read: 0,
            };
            for doc in input::json_documents(&mut counter) {
                if runner.done() {
                    break;
                }
                runner.document(doc?, &mut sink)?;
            }
            counter.read
        }
    };
    runner.finish(&mut sink)?;
    sink.counts.processed = read.min(total);
    sink.counts.scanned = if compressed { size } else { read.min(size) };
    sink.finish()
}

trait ReadSeek: Read + Seek + Send {}
impl<T: Read + Seek + Send> ReadSeek for T {}

/// A reader that counts what passes.
struct Counter<R> {
    inner: R,
    read: u64,
}

impl<R: Read> Read for Counter<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.read += n as u64;
        Ok(n)
    }
}

/// A window from the first record starting at or after `start` (a record starts there
/// when the byte before it is a record delimiter).
fn seek_range(
    mut reader: Box<dyn ReadSeek>,
    start: u64,
    delimiter: &[u8],
) -> AwsResult<Window<Box<dyn ReadSeek>>> {
    let from = start.saturating_sub(1);
    reader
        .seek(SeekFrom::Start(from))
        .map_err(input::read_error)?;
    let mut window = Window::new(reader, from);
    if start > 0 {
        window.skip_past(delimiter).map_err(input::read_error)?;
    }
    Ok(window)
}

fn csv_records(
    csv: &CsvInput,
    mut reader: Box<dyn ReadSeek>,
    (start, end): (u64, u64),
    runner: &mut Runner,
    sink: &mut Sink,
) -> AwsResult<u64> {
    let mut names: Option<Vec<String>> = None;
    let mut read = 0;
    if csv.header != "NONE" {
        let mut window = Window::new(&mut reader, 0);
        let header = csv.record(&mut window)?;
        read += window.read;
        let header_end = window.offset;
        if csv.header == "USE" {
            names = header.map(|(fields, _)| fields);
        }
        if start < header_end {
            return csv_from(csv, reader, header_end, end, names, runner, sink).map(|n| n + read);
        }
    }
    csv_from(csv, reader, start, end, names, runner, sink).map(|n| n + read)
}

#[allow(clippy::too_many_arguments)]
fn csv_from(
    csv: &CsvInput,
    reader: Box<dyn ReadSeek>,
    start: u64,
    end: u64,
    names: Option<Vec<String>>,
    runner: &mut Runner,
    sink: &mut Sink,
) -> AwsResult<u64> {
    let mut window = seek_range(reader, start, &csv.record_delimiter)?;
    while !runner.done() {
        let Some((fields, offset)) = csv.record(&mut window)? else {
            break;
        };
        if offset > end {
            break;
        }
        let record = Datum::Struct(
            fields
                .into_iter()
                .enumerate()
                .map(|(i, f)| {
                    let name = names.as_ref().and_then(|n| n.get(i)).cloned();
                    (name.unwrap_or_else(|| format!("_{}", i + 1)), Datum::Str(f))
                })
                .collect(),
        );
        runner.record(&record, sink)?;
    }
    Ok(window.read)
}

fn json_lines(
    reader: Box<dyn ReadSeek>,
    (start, end): (u64, u64),
    runner: &mut Runner,
    sink: &mut Sink,
) -> AwsResult<u64> {
    let mut window = seek_range(reader, start, b"\n")?;
    while !runner.done() {
        let Some((line, offset)) = window.line(b"\n")? else {
            break;
        };
        if offset > end {
            break;
        }
        if let Some(doc) = input::json_line(&line)? {
            runner.document(doc, sink)?;
        }
    }
    Ok(window.read)
}

/// A query's evaluation over records: filtering, projecting or aggregating, and LIMIT.
struct Runner<'q> {
    query: &'q Query,
    names: Vec<String>,
    aggregates: Option<Vec<(Accumulator, Option<&'q Expr>)>>,
    emitted: u64,
    /// When the query started (`UTCNOW()`), on the server clock.
    now: i64,
}

impl<'q> Runner<'q> {
    fn new(query: &'q Query) -> AwsResult<Runner<'q>> {
        let items = query.items.as_deref().unwrap_or_default();
        let names = items
            .iter()
            .enumerate()
            .map(|(i, item)| {
                item.alias
                    .clone()
                    .unwrap_or_else(|| column_name(&item.expr, i))
            })
            .collect();
        let aggregates = if items.iter().any(|i| i.expr.has_aggregate()) {
            let mut accumulators = Vec::new();
            for item in items {
                let Expr::Aggregate(kind, arg) = &item.expr else {
                    return Err(error(
                        "UnsupportedSqlStructure",
                        "Unsupported SQL structure: aggregate functions cannot be mixed with other expressions in the SELECT list.",
                    ));
                };
                accumulators.push((Accumulator::new(*kind), arg.as_deref()));
            }
            Some(accumulators)
        } else {
            None
        };
        Ok(Runner {
            query,
            names,
            aggregates,
            emitted: 0,
            now: roto_core::timestamp::now_millis(),
        })
    }

    fn done(&self) -> bool {
        self.aggregates.is_none() && self.query.limit.is_some_and(|l| self.emitted >= l)
    }

    /// A JSON document: the records the FROM path reaches in it.
    fn document(&mut self, doc: Datum, sink: &mut Sink) -> AwsResult<()> {
        let mut records = vec![doc];
        for (i, step) in self.query.from.iter().enumerate() {
            records = records
                .into_iter()
                .flat_map(|r| match (step, r) {
                    (Step::Wildcard, Datum::List(items)) if i > 0 => items,
                    (Step::Wildcard, r) => vec![r],
                    (step, r) => vec![r.step(step)],
                })
                .filter(|r| *r != Datum::Missing)
                .collect();
        }
        for record in records {
            if self.done() {
                break;
            }
            self.record(&record, sink)?;
        }
        Ok(())
    }

    fn record(&mut self, record: &Datum, sink: &mut Sink) -> AwsResult<()> {
        let scope = Scope {
            record,
            alias: self.query.alias.as_deref(),
            now: self.now,
        };
        if let Some(filter) = &self.query.filter {
            if truth(&eval(filter, &scope)?) != Some(true) {
                return Ok(());
            }
        }
        if let Some(aggregates) = &mut self.aggregates {
            for (acc, arg) in aggregates.iter_mut() {
                acc.add(arg.map(|a| eval(a, &scope)).transpose()?)?;
            }
            return Ok(());
        }
        self.emitted += 1;
        let Some(items) = &self.query.items else {
            return match record {
                Datum::Struct(fields) => {
                    let (names, values): (Vec<String>, Vec<Datum>) = fields.iter().cloned().unzip();
                    sink.record(&names, &values)
                }
                other => sink.record(&["_1".to_string()], std::slice::from_ref(other)),
            };
        };
        let values = items
            .iter()
            .map(|item| eval(&item.expr, &scope))
            .collect::<AwsResult<Vec<_>>>()?;
        sink.record(&self.names, &values)
    }

    fn finish(&self, sink: &mut Sink) -> AwsResult<()> {
        if let Some(aggregates) = &self.aggregates {
            if self.query.limit != Some(0) {
                let values: Vec<Datum> = aggregates.iter().map(|(a, _)| a.finish()).collect();
                sink.record(&self.names, &values)?;
            }
        }
        Ok(())
    }
}

/// The output name of an unnamed SELECT item: its last path name, else `_N`.
fn column_name(expr: &Expr, index: usize) -> String {
    if let Expr::Path { head, steps, .. } = expr {
        match steps.last() {
            Some(Step::Field { name, .. }) => return name.clone(),
            None => return head.clone(),
            _ => {}
        }
    }
    format!("_{}", index + 1)
}
