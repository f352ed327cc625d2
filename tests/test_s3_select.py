"""S3 Select (SelectObjectContent) black-box tests: boto3's select_object_content parses the
event stream (framing and CRCs), so each test reads Records, Stats, Progress and End as an
SDK user does, over CSV, JSON documents and lines, and GZIP- and BZIP2-compressed objects."""

from __future__ import annotations

import gzip
import json

import pytest

from s3_helpers import fails

PEOPLE = (
    "name,age,city\n"
    "Alice,31,\"Paris, FR\"\n"
    "# a comment line\n"
    "Bob,25,Oslo\n"
    "Carol,47,Lima\n"
)
CSV_USE = {"CSV": {"FileHeaderInfo": "USE"}}
CSV_OUT = {"CSV": {}}
JSON_OUT = {"JSON": {}}


@pytest.fixture
def s3(client):
    s3 = client("s3")
    s3.create_bucket(Bucket="sel")
    s3.put_object(Bucket="sel", Key="people.csv", Body=PEOPLE.encode())
    return s3


def select(s3, sql, key="people.csv", input_serialization=None, output=None, **extra):
    """Runs a query; the concatenated records and the events by type."""
    response = s3.select_object_content(
        Bucket="sel", Key=key, Expression=sql, ExpressionType="SQL",
        InputSerialization=input_serialization or CSV_USE,
        OutputSerialization=output or CSV_OUT, **extra)
    records, events = b"", {}
    for event in response["Payload"]:
        for kind, body in event.items():
            events.setdefault(kind, []).append(body)
            if kind == "Records":
                records += body["Payload"]
    return records.decode(), events


def test_select_star_with_where_returns_matching_rows_then_stats_and_end(s3):
    records, events = select(s3, "SELECT * FROM S3Object s WHERE CAST(s.age AS INT) > 30")
    assert records == "Alice,31,\"Paris, FR\"\nCarol,47,Lima\n"
    stats = events["Stats"][0]["Details"]
    assert stats["BytesScanned"] == len(PEOPLE) == stats["BytesProcessed"]
    assert stats["BytesReturned"] == len(records)
    assert "End" in events and "Progress" not in events


def test_select_columns_by_name_position_and_alias_to_json(s3):
    records, _ = select(s3, "SELECT s.name AS who, s._2, UPPER(city) FROM S3Object s WHERE s.name <> 'Bob'",
                        output=JSON_OUT)
    rows = [json.loads(line) for line in records.splitlines()]
    assert rows == [{"who": "Alice", "_2": "31", "_3": "PARIS, FR"},
                    {"who": "Carol", "_2": "47", "_3": "LIMA"}]


def test_header_ignore_and_none_use_positional_columns(s3):
    records, _ = select(s3, "SELECT _1 FROM S3Object", input_serialization={"CSV": {"FileHeaderInfo": "IGNORE"}})
    assert records == "Alice\nBob\nCarol\n"
    records, _ = select(s3, "SELECT _1 FROM S3Object LIMIT 1", input_serialization={"CSV": {}})
    assert records == "name\n"


def test_where_operators_like_between_in_is_null_and_arithmetic(s3):
    cases = {
        "s.name LIKE '_o%'": "Bob\n",
        "CAST(s.age AS INT) BETWEEN 26 AND 40": "Alice\n",
        "s.city IN ('Lima', 'Oslo') AND NOT s.name = 'Bob'": "Carol\n",
        "s.age * 2 + 1 = 51": "Bob\n",
        "s.missing IS NULL AND s.name IS NOT MISSING AND LOWER(s.name) = 'carol'": "Carol\n",
        "CHAR_LENGTH(s.name) = 5 OR SUBSTRING(s.city, 1, 2) = 'Os'": "Alice\nBob\nCarol\n",
        "TRIM(LEADING 'A' FROM s.name) = 'lice'": "Alice\n",
    }
    for where, expected in cases.items():
        records, _ = select(s3, f"SELECT s.name FROM S3Object s WHERE {where}")
        assert records == expected, where


def test_aggregates_count_sum_avg_min_max(s3):
    records, _ = select(s3, "SELECT COUNT(*), SUM(CAST(age AS INT)), AVG(CAST(age AS FLOAT)), "
                            "MIN(name), MAX(CAST(age AS INT)) FROM S3Object")
    assert records == "3,103,34.333333333333336,Alice,47\n"
    records, _ = select(s3, "SELECT COUNT(*) FROM S3Object s WHERE s.city = 'Nowhere'")
    assert records == "0\n"


def test_csv_input_settings_delimiters_quotes_comments_and_quoted_newlines(s3):
    body = "a|'x;y'|c;%skip|me;'multi\nline'|2|3;"
    s3.put_object(Bucket="sel", Key="odd.csv", Body=body.encode())
    settings = {"CSV": {"FileHeaderInfo": "NONE", "FieldDelimiter": "|", "RecordDelimiter": ";",
                        "QuoteCharacter": "'", "Comments": "%", "AllowQuotedRecordDelimiter": True}}
    records, _ = select(s3, "SELECT _2, _1 FROM S3Object", key="odd.csv", input_serialization=settings,
                        output={"CSV": {"FieldDelimiter": "\t", "RecordDelimiter": "\n", "QuoteFields": "ALWAYS"}})
    assert records == "\"x;y\"\t\"a\"\n\"2\"\t\"multi\nline\"\n"
    settings["CSV"]["AllowQuotedRecordDelimiter"] = False
    s3.put_object(Bucket="sel", Key="nl.csv", Body=b"a,\"b\nc\"\n")
    fails(lambda: select(s3, "SELECT * FROM S3Object", key="nl.csv", input_serialization={"CSV": {}}),
          "CSVEscapingRecordDelimiter", 400)


def test_json_documents_and_lines_with_from_paths(s3):
    doc = {"rules": [{"id": 1, "tags": ["a"]}, {"id": 2, "tags": []}], "owner": "me"}
    s3.put_object(Bucket="sel", Key="doc.json", Body=json.dumps(doc).encode())
    records, _ = select(s3, "SELECT r.id, r.tags[0] AS first FROM S3Object[*].rules[*] r WHERE r.id > 0",
                        key="doc.json", input_serialization={"JSON": {"Type": "DOCUMENT"}}, output=JSON_OUT)
    assert [json.loads(line) for line in records.splitlines()] == [{"id": 1, "first": "a"}, {"id": 2}]
    lines = '{"n":"x","v":1}\n\n{"n":"y","v":2.5,"o":{"k":[1,2]}}\n'
    s3.put_object(Bucket="sel", Key="lines.json", Body=lines.encode())
    records, _ = select(s3, "SELECT * FROM S3Object s WHERE s.v > 1", key="lines.json",
                        input_serialization={"JSON": {"Type": "LINES"}}, output=JSON_OUT)
    assert records == '{"n":"y","v":2.5,"o":{"k":[1,2]}}\n'
    records, _ = select(s3, "SELECT s.n, s.o FROM S3Object s", key="lines.json",
                        input_serialization={"JSON": {"Type": "LINES"}})
    assert records == "x,\ny,\"{\"\"k\"\":[1,2]}\"\n"


def test_gzip_input_is_decompressed_and_progress_is_sent_when_asked(s3):
    s3.put_object(Bucket="sel", Key="people.csv.gz", Body=gzip.compress(PEOPLE.encode()))
    records, events = select(s3, "SELECT name FROM S3Object LIMIT 2", key="people.csv.gz",
                             input_serialization={**CSV_USE, "CompressionType": "GZIP"},
                             RequestProgress={"Enabled": True})
    assert records == "Alice\nBob\n"
    assert events["Progress"][-1]["Details"]["BytesReturned"] == len(records)
    assert events["Stats"][0]["Details"]["BytesScanned"] < len(PEOPLE) + 40


def test_scan_range_keeps_records_that_start_inside_it(s3):
    body = "".join(f"{i},row{i}\n" for i in range(10)).encode()  # 7 bytes a row
    s3.put_object(Bucket="sel", Key="rows.csv", Body=body)
    plain = {"CSV": {}}
    records, _ = select(s3, "SELECT _1 FROM S3Object", key="rows.csv", input_serialization=plain,
                        ScanRange={"Start": 10, "End": 21})
    assert records == "2\n3\n"
    records, _ = select(s3, "SELECT _1 FROM S3Object", key="rows.csv", input_serialization=plain,
                        ScanRange={"End": 14})
    assert records == "8\n9\n"
    fails(lambda: select(s3, "SELECT * FROM S3Object", key="rows.csv", input_serialization=plain,
                         ScanRange={"Start": 5, "End": 2}), "InvalidScanRange", 400)


@pytest.mark.parametrize("sql,code", [
    ("SELECT * FROM S3Object WHERE", "ParseExpectedExpression"),
    ("SELECT * FROM S3Object s WHERE s._1 = 1 1", "ParseUnexpectedToken"),
    ("SELECT * FROM S3Object WHERE _1 # 2", "LexerInvalidChar"),
    ("SELECT _1", "ParseSelectMissingFrom"),
    ("SELECT CAST(_1 AS BLOB) FROM S3Object", "ParseExpectedTypeName"),
    ("SELECT FOO(_1) FROM S3Object", "UnsupportedFunction"),
    ("SELECT CAST(name AS INT) FROM S3Object", "CastFailed"),
    ("SELECT _0 FROM S3Object", "InvalidColumnIndex"),
])
def test_bad_sql_answers_s3_select_errors(s3, sql, code):
    fails(lambda: select(s3, sql), code, 400)


def test_request_errors(s3):
    fails(lambda: s3.select_object_content(
        Bucket="sel", Key="people.csv", Expression="SELECT * FROM S3Object", ExpressionType="SQL",
        InputSerialization={"CSV": {}, "JSON": {"Type": "LINES"}}, OutputSerialization=CSV_OUT),
        "ObjectSerializationConflict", 400)
    fails(lambda: select(s3, "SELECT * FROM S3Object", input_serialization={"CSV": {"FileHeaderInfo": "FIRST"}}),
          "InvalidFileHeaderInfo", 400)
    fails(lambda: select(s3, "SELECT * FROM S3Object", input_serialization={"JSON": {"Type": "TREE"}}),
          "InvalidJsonType", 400)
    fails(lambda: select(s3, "SELECT * FROM S3Object", output={"CSV": {"QuoteFields": "SOMETIMES"}}),
          "InvalidQuoteFields", 400)
    fails(lambda: select(s3, "SELECT * FROM S3Object", input_serialization={"Parquet": {}}),
          "ParquetParsingError", 400)
    fails(lambda: select(s3, "SELECT * FROM S3Object", input_serialization={"JSON": {"Type": "DOCUMENT"}},
                         ScanRange={"Start": 1}), "UnsupportedScanRangeInput", 400)
    fails(lambda: select(s3, "SELECT * FROM S3Object", key="absent.csv"), "NoSuchKey", 404)
    fails(lambda: s3.select_object_content(
        Bucket="nobucket", Key="k", Expression="SELECT * FROM S3Object", ExpressionType="SQL",
        InputSerialization=CSV_USE, OutputSerialization=CSV_OUT), "NoSuchBucket", 404)


def test_an_error_after_results_began_ends_the_stream_with_an_error_event(s3):
    rows = "".join(f"{i}\n" for i in range(20000)) + "oops\n"
    s3.put_object(Bucket="sel", Key="late.csv", Body=rows.encode())
    response = s3.select_object_content(
        Bucket="sel", Key="late.csv", Expression="SELECT CAST(_1 AS INT) FROM S3Object",
        ExpressionType="SQL", InputSerialization={"CSV": {}}, OutputSerialization=CSV_OUT)
    seen = b""
    with pytest.raises(Exception) as raised:
        for event in response["Payload"]:
            seen += event.get("Records", {}).get("Payload", b"")
    assert seen.startswith(b"0\n1\n")
    assert "CastFailed" in str(raised.value)


EVENTS = (
    "id,at,level\n"
    "1,2024-03-01T10:15:00Z,INFO\n"
    "2,2024-03-31T23:59:59.250+02:00,WARN\n"
    "3,2023-12-25T08:00Z,ERROR\n"
)


def test_date_functions_over_csv_timestamps(s3):
    s3.put_object(Bucket="sel", Key="events.csv", Body=EVENTS.encode())
    records, _ = select(s3, "SELECT s.id FROM S3Object s WHERE TO_TIMESTAMP(s.at) >= `2024-01-01T`",
                        key="events.csv")
    assert records == "1\n2\n"
    records, _ = select(s3, "SELECT EXTRACT(YEAR FROM TO_TIMESTAMP(s.at)), "
                            "EXTRACT(TIMEZONE_HOUR FROM TO_TIMESTAMP(s.at)), "
                            "DATE_DIFF(day, `2024-01-01T`, TO_TIMESTAMP(s.at)), "
                            "DATE_ADD(month, 1, TO_TIMESTAMP(s.at)), "
                            "TO_STRING(TO_TIMESTAMP(s.at), 'MMMM d, y h:mm a XXX') "
                            "FROM S3Object s", key="events.csv", output=JSON_OUT)
    rows = [list(json.loads(line).values()) for line in records.splitlines()]
    assert rows == [
        [2024, 0, 60, "2024-04-01T10:15:00Z", "March 1, 2024 10:15 AM Z"],
        [2024, 2, 90, "2024-04-30T23:59:59.250+02:00", "March 31, 2024 11:59 PM +02:00"],
        [2023, 0, -6, "2024-01-25T08:00Z", "December 25, 2023 8:00 AM Z"],
    ]
    records, _ = select(s3, "SELECT MIN(TO_TIMESTAMP(s.at)), MAX(TO_TIMESTAMP(s.at)) FROM S3Object s",
                        key="events.csv")
    assert records == "2023-12-25T08:00Z,2024-03-31T23:59:59.250+02:00\n"


def test_documented_date_function_examples(s3):
    cases = {
        "DATE_ADD(year, 5, `2010-01-01T`)": "2015-01-01",
        "DATE_ADD(month, 13, `2010T`)": "2011-02T",
        "DATE_ADD(hour, 1, `2017T`)": "2017-01-01T01:00-00:00",
        "DATE_ADD(second, 1, `2017-01-02T03:04:05.006Z`)": "2017-01-02T03:04:06.006Z",
        "DATE_DIFF(month, `2011T`, `2010T`)": "-12",
        "EXTRACT(TIMEZONE_MINUTE FROM `2017-01-02T03:04:05+07:08`)": "8",
        "TO_STRING(`1969-07-20T20:18Z`, 'MMMM d, y')": '"July 20, 1969"',
        "TO_STRING(`1969-07-20T20:18+08:00`, 'y-MM-dd''T''H:m:ssXXXX')": "1969-07-20T20:18:00+0800",
        "TO_TIMESTAMP('2007-02-23T12:14:33.079-08:00')": "2007-02-23T12:14:33.079-08:00",
        "TO_TIMESTAMP('July 20, 1969', 'MMMM d, y')": "1969-07-20",
        "CAST('2007T' AS TIMESTAMP)": "2007T",
        "DATE_DIFF(year, `2000T`, UTCNOW()) > 20": "true",
    }
    for expr, want in cases.items():
        records, _ = select(s3, f"SELECT {expr} FROM S3Object LIMIT 1")
        assert records == f"{want}\n", expr


def test_case_searched_and_simple(s3):
    records, _ = select(s3, "SELECT s.name, CASE WHEN CAST(s.age AS INT) > 40 THEN 'senior' "
                            "WHEN CAST(s.age AS INT) > 30 THEN 'mid' ELSE 'junior' END FROM S3Object s")
    assert records == "Alice,mid\nBob,junior\nCarol,senior\n"
    records, _ = select(s3, "SELECT CASE s.city WHEN 'Oslo' THEN 'NO' WHEN 'Lima' THEN 'PE' END AS c "
                            "FROM S3Object s", output=JSON_OUT)
    assert [json.loads(line) for line in records.splitlines()] == [{"c": None}, {"c": "NO"}, {"c": "PE"}]
    records, _ = select(s3, "SELECT s.name FROM S3Object s WHERE CASE WHEN s.city = 'Oslo' THEN TRUE END")
    assert records == "Bob\n"


@pytest.mark.parametrize("sql,code", [
    ("SELECT DATE_ADD(week, 1, `2010T`) FROM S3Object", "ParseExpectedDatePart"),
    ("SELECT DATE_DIFF(year `2010T`, `2011T`) FROM S3Object", "ParseExpectedArgumentDelimiter"),
    ("SELECT EXTRACT(YEAR `2010T`) FROM S3Object", "ParseExpectedKeyword"),
    ("SELECT `2010-13-01T` FROM S3Object", "LexerInvalidIONLiteral"),
    ("SELECT CASE ELSE 1 END FROM S3Object", "ParseExpectedWhenClause"),
    ("SELECT CASE WHEN TRUE THEN 1 FROM S3Object", "ParseExpectedKeyword"),
    ("SELECT TO_TIMESTAMP(name) FROM S3Object", "ValueParseFailure"),
    ("SELECT EXTRACT(YEAR FROM name) FROM S3Object", "IncorrectSqlFunctionArgumentType"),
    ("SELECT DATE_ADD(day, name, `2010T`) FROM S3Object", "IncorrectSqlFunctionArgumentType"),
    ("SELECT CAST(name AS TIMESTAMP) FROM S3Object", "CastFailed"),
    ("SELECT UTCNOW(1) FROM S3Object", "EvaluatorInvalidArguments"),
    ("SELECT TO_STRING(UTCNOW(), 'yyyy-qq') FROM S3Object", "EvaluatorInvalidTimestampFormatPatternSymbol"),
    ("SELECT TO_STRING(UTCNOW(), 'yyy') FROM S3Object", "EvaluatorInvalidTimestampFormatPatternToken"),
    ("SELECT TO_STRING(UTCNOW(), 'y ''T') FROM S3Object", "EvaluatorUnterminatedTimestampFormatPatternToken"),
    ("SELECT TO_TIMESTAMP('J', 'MMMMM') FROM S3Object", "EvaluatorInvalidTimestampFormatPatternSymbolForParsing"),
    ("SELECT TO_TIMESTAMP('1 1', 'y y') FROM S3Object", "EvaluatorTimestampFormatPatternDuplicateFields"),
    ("SELECT TO_TIMESTAMP('2010 8', 'y h') FROM S3Object", "EvaluatorTimestampFormatPatternHourClockAmPmMismatch"),
    ("SELECT TO_TIMESTAMP('2010 1', 'y d') FROM S3Object", "EvaluatorInvalidTimestampFormatPattern"),
])
def test_bad_date_arguments_answer_s3_select_errors(s3, sql, code):
    fails(lambda: select(s3, sql), code, 400)


def test_bzip2_objects_are_read(s3):
    import bz2
    s3.put_object(Bucket="sel", Key="people.csv.bz2", Body=bz2.compress(PEOPLE.encode()))
    bz = {"CSV": {"FileHeaderInfo": "USE"}, "CompressionType": "BZIP2"}
    records, events = select(s3, "SELECT s.name FROM S3Object s WHERE s.city = 'Lima'",
                             key="people.csv.bz2", input_serialization=bz)
    assert records == "Carol\n"
    stats = events["Stats"][0]["Details"]
    assert stats["BytesProcessed"] == len(PEOPLE)
    # Two streams one after the other (as pbzip2 writes them) read as one object.
    lines = b"".join(bz2.compress(json.dumps({"n": i}).encode() + b"\n") for i in range(3))
    s3.put_object(Bucket="sel", Key="lines.json.bz2", Body=lines)
    records, _ = select(s3, "SELECT SUM(s.n) FROM S3Object s", key="lines.json.bz2",
                        input_serialization={"JSON": {"Type": "LINES"}, "CompressionType": "BZIP2"})
    assert records == "3\n"
    fails(lambda: select(s3, "SELECT * FROM S3Object", input_serialization=bz),
          "InvalidCompressionFormat", 400)
    fails(lambda: select(s3, "SELECT * FROM S3Object", key="people.csv.bz2",
                         input_serialization={**bz, "CompressionType": "ZSTD"}),
          "InvalidCompressionFormat", 400)
    fails(lambda: select(s3, "SELECT * FROM S3Object", key="people.csv.bz2", input_serialization=bz,
                         ScanRange={"Start": 1}), "UnsupportedScanRangeInput", 400)
