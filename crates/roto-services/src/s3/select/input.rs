//! Reading an object's records as S3 Select reads them: CSV with its header, delimiter,
//! quote, escape and comment settings, JSON documents or lines; each record a [`Datum`].
//!
//! The object is read through a window of a few chunks, so memory holds one record (at
//! most 1 MB, S3's limit) and not the object. `ScanRange` keeps the records whose first
//! byte lies in the range, as S3 does.

use std::io::{self, Read};

use roto_core::AwsError;
use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};

use super::eval::Datum;
use super::sql::error;

/// The longest record S3 reads (1 MB).
pub const MAX_RECORD: usize = 1 << 20;
/// How much is read from the object at a time.
const CHUNK: usize = 64 * 1024;

/// CSV input settings (`CSVInput`); the default is S3's for a request that names none.
#[derive(Debug, Clone)]
pub struct CsvInput {
    /// `USE`, `IGNORE` or `NONE`.
    pub header: String,
    pub comments: Option<Vec<u8>>,
    pub quote_escape: Vec<u8>,
    pub record_delimiter: Vec<u8>,
    pub field_delimiter: Vec<u8>,
    pub quote: Vec<u8>,
    pub allow_quoted_record_delimiter: bool,
}

impl Default for CsvInput {
    fn default() -> CsvInput {
        CsvInput {
            header: "NONE".into(),
            comments: Some(b"#".to_vec()),
            quote_escape: b"\"".to_vec(),
            record_delimiter: b"\n".to_vec(),
            field_delimiter: b",".to_vec(),
            quote: b"\"".to_vec(),
            allow_quoted_record_delimiter: false,
        }
    }
}

/// A window over the object's bytes, with the offset of its start in the object.
pub struct Window<R> {
    reader: R,
    buf: Vec<u8>,
    start: usize,
    eof: bool,
    /// The object offset of `buf[start]`.
    pub offset: u64,
    /// Bytes read from the object so far.
    pub read: u64,
}

impl<R: Read> Window<R> {
    pub fn new(reader: R, offset: u64) -> Window<R> {
        Window {
            reader,
            buf: Vec::new(),
            start: 0,
            eof: false,
            offset,
            read: 0,
        }
    }

    fn data(&self) -> &[u8] {
        &self.buf[self.start..]
    }

    /// Reads another chunk; false at the end of the object.
    fn fill(&mut self) -> io::Result<bool> {
        if self.eof {
            return Ok(false);
        }
        if self.start > 0 {
            self.buf.drain(..self.start);
            self.start = 0;
        }
        let len = self.buf.len();
        self.buf.resize(len + CHUNK, 0);
        let n = self.reader.read(&mut self.buf[len..])?;
        self.buf.truncate(len + n);
        self.read += n as u64;
        self.eof = n == 0;
        Ok(n > 0)
    }

    fn consume(&mut self, n: usize) {
        self.start += n;
        self.offset += n as u64;
    }

    /// Skips past the next occurrence of `delimiter` (for a scan range starting inside a
    /// record).
    pub fn skip_past(&mut self, delimiter: &[u8]) -> io::Result<()> {
        loop {
            if let Some(at) = find(self.data(), delimiter) {
                self.consume(at + delimiter.len());
                return Ok(());
            }
            let keep = self.data().len().saturating_sub(delimiter.len());
            self.consume(keep);
            if !self.fill()? {
                let rest = self.data().len();
                self.consume(rest);
                return Ok(());
            }
        }
    }

    /// The next line (without its delimiter) and the offset where it starts.
    pub fn line(&mut self, delimiter: &[u8]) -> Result<Option<(Vec<u8>, u64)>, AwsError> {
        loop {
            if let Some(at) = find(self.data(), delimiter) {
                let line = self.data()[..at].to_vec();
                let offset = self.offset;
                self.consume(at + delimiter.len());
                return Ok(Some((line, offset)));
            }
            if self.data().len() > MAX_RECORD {
                return Err(over_max_record());
            }
            if !self.fill().map_err(read_error)? {
                if self.data().is_empty() {
                    return Ok(None);
                }
                let line = self.data().to_vec();
                let offset = self.offset;
                let n = line.len();
                self.consume(n);
                return Ok(Some((line, offset)));
            }
        }
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    if needle.is_empty() {
        return None;
    }
    haystack.windows(needle.len()).position(|w| w == needle)
}

fn over_max_record() -> AwsError {
    error(
        "OverMaxRecordSize",
        "The character number in one record is more than our max threshold, maxCharsPerRecord: 1,048,576",
    )
}

pub fn read_error(e: io::Error) -> AwsError {
    AwsError::internal(format!("reading the object failed: {e}"))
}

fn csv_error() -> AwsError {
    error(
        "CSVParsingError",
        "Encountered an error parsing the CSV file. Check the file and try again.",
    )
}

impl CsvInput {
    /// The next record's fields and the offset where it starts; `None` at the end.
    /// Comment lines and empty lines are skipped.
    pub fn record<R: Read>(
        &self,
        window: &mut Window<R>,
    ) -> Result<Option<(Vec<String>, u64)>, AwsError> {
        loop {
            let offset = window.offset;
            let Some((fields, consumed)) = self.next_fields(window)? else {
                return Ok(None);
            };
            let comment = self
                .comments
                .as_ref()
                .is_some_and(|c| !c.is_empty() && window.data()[..consumed].starts_with(c));
            window.consume(consumed);
            let blank = fields.len() == 1 && fields[0].is_empty();
            if !comment && !blank {
                return Ok(Some((fields, offset)));
            }
        }
    }

    /// Parses one record at the start of the window, reading more as needed; the fields
    /// and the bytes they span with their delimiter.
    fn next_fields<R: Read>(
        &self,
        window: &mut Window<R>,
    ) -> Result<Option<(Vec<String>, usize)>, AwsError> {
        loop {
            if window.eof && window.data().is_empty() {
                return Ok(None);
            }
            match self.parse(window.data(), window.eof)? {
                Some(found) => return Ok(Some(found)),
                None => {
                    if window.data().len() > MAX_RECORD {
                        return Err(over_max_record());
                    }
                    if !window.fill().map_err(read_error)? && window.data().is_empty() {
                        return Ok(None);
                    }
                }
            }
        }
    }

    /// One record from `data`: `None` when `data` may end inside it and more may come.
    fn parse(&self, data: &[u8], eof: bool) -> Result<Option<(Vec<String>, usize)>, AwsError> {
        let mut fields = Vec::new();
        let mut field = Vec::new();
        let mut quoted = false;
        let mut i = 0;
        let at =
            |i: usize, s: &[u8]| !s.is_empty() && data.get(i..).is_some_and(|d| d.starts_with(s));
        while i < data.len() {
            if quoted {
                // An escape before a quote makes the quote literal (with the default
                // escape, the quote itself, a doubled quote).
                if at(i, &self.quote_escape) && at(i + self.quote_escape.len(), &self.quote) {
                    field.extend_from_slice(&self.quote);
                    i += self.quote_escape.len() + self.quote.len();
                } else if at(i, &self.quote) {
                    if !eof && i + self.quote.len() >= data.len() {
                        return Ok(None);
                    }
                    quoted = false;
                    i += self.quote.len();
                } else if at(i, &self.record_delimiter) && !self.allow_quoted_record_delimiter {
                    return Err(error(
                        "CSVEscapingRecordDelimiter",
                        "A quoted record delimiter was found in the file. To allow quoted record delimiters, set AllowQuotedRecordDelimiter to 'TRUE'.",
                    ));
                } else {
                    field.push(data[i]);
                    i += 1;
                }
            } else if at(i, &self.field_delimiter) {
                fields.push(text(std::mem::take(&mut field))?);
                i += self.field_delimiter.len();
            } else if at(i, &self.record_delimiter) {
                if self.record_delimiter == b"\n" && field.last() == Some(&b'\r') {
                    field.pop();
                }
                fields.push(text(field)?);
                return Ok(Some((fields, i + self.record_delimiter.len())));
            } else if at(i, &self.quote) && field.iter().all(|b| *b == b' ') {
                field.clear();
                quoted = true;
                i += self.quote.len();
            } else {
                field.push(data[i]);
                i += 1;
            }
        }
        if !eof {
            return Ok(None);
        }
        if quoted {
            return Err(csv_error());
        }
        if self.record_delimiter == b"\n" && field.last() == Some(&b'\r') {
            field.pop();
        }
        fields.push(text(field)?);
        Ok(Some((fields, data.len())))
    }
}

fn text(bytes: Vec<u8>) -> Result<String, AwsError> {
    String::from_utf8(bytes).map_err(|_| {
        error(
            "InvalidTextEncoding",
            "UTF-8 encoding is required. The text encoding error was found near byte offset.",
        )
    })
}

fn json_error() -> AwsError {
    error(
        "JSONParsingError",
        "Encountered an error parsing the JSON file. Check the file and try again.",
    )
}

/// Parses one JSON line (blank lines are `None`).
pub fn json_line(line: &[u8]) -> Result<Option<Datum>, AwsError> {
    if line.iter().all(u8::is_ascii_whitespace) {
        return Ok(None);
    }
    serde_json::from_slice(line)
        .map(Some)
        .map_err(|_| json_error())
}

/// The JSON documents of a reader, one after another.
pub fn json_documents<R: Read>(reader: R) -> impl Iterator<Item = Result<Datum, AwsError>> {
    serde_json::Deserializer::from_reader(reader)
        .into_iter::<Datum>()
        .map(|r| r.map_err(|_| json_error()))
}

impl<'de> Deserialize<'de> for Datum {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Datum, D::Error> {
        deserializer.deserialize_any(DatumVisitor)
    }
}

/// Builds a [`Datum`] from JSON, keeping objects' fields in their order.
struct DatumVisitor;

impl<'de> Visitor<'de> for DatumVisitor {
    type Value = Datum;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_unit<E>(self) -> Result<Datum, E> {
        Ok(Datum::Null)
    }

    fn visit_bool<E>(self, b: bool) -> Result<Datum, E> {
        Ok(Datum::Bool(b))
    }

    fn visit_i64<E>(self, n: i64) -> Result<Datum, E> {
        Ok(Datum::Int(n))
    }

    fn visit_u64<E>(self, n: u64) -> Result<Datum, E> {
        Ok(i64::try_from(n).map_or(Datum::Float(n as f64), Datum::Int))
    }

    fn visit_f64<E>(self, f: f64) -> Result<Datum, E> {
        Ok(Datum::Float(f))
    }

    fn visit_str<E>(self, s: &str) -> Result<Datum, E> {
        Ok(Datum::Str(s.to_string()))
    }

    fn visit_string<E>(self, s: String) -> Result<Datum, E> {
        Ok(Datum::Str(s))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Datum, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(Datum::List(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Datum, A::Error> {
        let mut fields = Vec::new();
        while let Some((k, v)) = map.next_entry::<String, Datum>()? {
            fields.push((k, v));
        }
        Ok(Datum::Struct(fields))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn csv() -> CsvInput {
        CsvInput::default()
    }

    fn records(input: &CsvInput, data: &[u8]) -> Result<Vec<Vec<String>>, AwsError> {
        let mut window = Window::new(data, 0);
        let mut out = Vec::new();
        while let Some((fields, _)) = input.record(&mut window)? {
            out.push(fields);
        }
        Ok(out)
    }

    #[test]
    fn csv_reads_quotes_escapes_comments_and_crlf() {
        let got = records(&csv(), b"a,\"b,c\",\"say \"\"hi\"\"\"\r\n#skip,me\n\nx,,y").unwrap();
        assert_eq!(
            got,
            vec![vec!["a", "b,c", "say \"hi\""], vec!["x", "", "y"]]
        );
    }

    #[test]
    fn csv_quoted_record_delimiters_need_the_setting() {
        let data = b"a,\"line1\nline2\"\nb,c\n";
        assert_eq!(
            records(&csv(), data).unwrap_err().code,
            "CSVEscapingRecordDelimiter"
        );
        let mut allow = csv();
        allow.allow_quoted_record_delimiter = true;
        assert_eq!(
            records(&allow, data).unwrap(),
            vec![vec!["a", "line1\nline2"], vec!["b", "c"]]
        );
    }

    #[test]
    fn csv_custom_delimiters_and_quotes() {
        let input = CsvInput {
            field_delimiter: b"|".to_vec(),
            record_delimiter: b";".to_vec(),
            quote: b"'".to_vec(),
            quote_escape: b"\\".to_vec(),
            ..csv()
        };
        let got = records(&input, b"a|'b\\'c'|d;e|f").unwrap();
        assert_eq!(got, vec![vec!["a", "b'c", "d"], vec!["e", "f"]]);
    }

    #[test]
    fn csv_unterminated_quote_is_a_parsing_error() {
        assert_eq!(
            records(&csv(), b"a,\"b").unwrap_err().code,
            "CSVParsingError"
        );
    }

    #[test]
    fn json_keeps_field_order() {
        let docs: Vec<Datum> = json_documents(&b"{\"b\":1,\"a\":[true,null]} {\"c\":\"x\"}"[..])
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(docs.len(), 2);
        let mut out = String::new();
        docs[0].write_json(&mut out);
        assert_eq!(out, r#"{"b":1,"a":[true,null]}"#);
        assert_eq!(json_line(b"{oops").unwrap_err().code, "JSONParsingError");
    }
}
