"""Data is never merged, altered or left behind.

Names that are not UTF-8 once percent-decoded are refused (never stored under U+FFFD);
user metadata is limited by S3's 2 KB rule rather than a header count, and its bytes come
back exactly (RFC 2047-encoded, as S3 answers them); a body of unknown length gets S3's
501; a store on disk sweeps what `kill -9` leaves in its blob directory and refuses a
damaged database at start-up. SDKs cannot send most of these inputs, so raw HTTP does.
"""

from __future__ import annotations

import base64
import hashlib
import http.client
import os
import re
import socket
import sqlite3
import subprocess
import time
from xml.etree import ElementTree

import pytest
from botocore.exceptions import ClientError

from roto_server import RotoServer, binary
from s3_helpers import AUTH, fails

LAMBDA_AUTH = AUTH.replace("/s3/", "/lambda/")
BLOB_NAME = re.compile(r"^[0-9a-f]{32}$")


def send(server, method: str, path: str, headers: list[tuple[str, str | bytes]], body: bytes = b"",
         chunked: bool = False):
    """One raw request with headers exactly as given (bytes values go out unchanged);
    `chunked` sends the body with `Transfer-Encoding: chunked` and no Content-Length.
    Returns (status, headers as a list of (lower-cased name, value), body)."""
    conn = http.client.HTTPConnection(server.host, server.port, timeout=30)
    try:
        conn.putrequest(method, path, skip_accept_encoding=True)
        for name, value in [("Authorization", AUTH), *headers]:
            conn.putheader(name, value)
        if chunked:
            conn.putheader("Transfer-Encoding", "chunked")
        elif method in ("PUT", "POST"):
            conn.putheader("Content-Length", str(len(body)))
        conn.endheaders()
        if chunked:
            conn.send(f"{len(body):x}\r\n".encode() + body + b"\r\n0\r\n\r\n" if body else b"0\r\n\r\n")
        elif body:
            conn.send(body)
        resp = conn.getresponse()
        data = resp.read()
        return resp.status, [(k.lower(), v) for k, v in resp.getheaders()], data
    finally:
        conn.close()


def error_of(body: bytes) -> dict[str, str]:
    """The fields of an S3 XML error body."""
    return {child.tag: child.text or "" for child in ElementTree.fromstring(body)}


def code_of(body: bytes) -> str:
    return error_of(body).get("Code", "") if body else ""


@pytest.fixture
def s3(client):
    return client("s3")


@pytest.fixture
def bucket(s3):
    s3.create_bucket(Bucket="data")
    return "data"


# --- names that are not UTF-8 --------------------------------------------------------------

def test_keys_that_are_not_utf8_are_refused_rather_than_merged(server, s3, bucket):
    for key in ("%FF", "%FE", "a%C3", "%C3%28"):
        status, _, body = send(server, "PUT", f"/{bucket}/{key}", [], b"first")
        assert (status, code_of(body)) == (400, "InvalidURI"), key
        assert error_of(body)["Message"] == "Couldn't parse the specified URI."
    assert s3.list_objects_v2(Bucket=bucket)["KeyCount"] == 0
    status, _, _ = send(server, "PUT", f"/{bucket}/%E2%82%AC", [], b"euro")
    assert status == 200
    assert s3.get_object(Bucket=bucket, Key="\u20ac")["Body"].read() == b"euro"


def test_bucket_names_and_query_values_that_are_not_utf8_are_refused(server, bucket):
    status, _, body = send(server, "PUT", "/%FF", [])
    assert (status, code_of(body)) == (400, "InvalidURI")
    status, _, body = send(server, "GET", f"/{bucket}?list-type=2&prefix=%FF", [])
    assert (status, code_of(body)) == (400, "InvalidURI")


def test_rest_json_names_that_are_not_utf8_are_refused(server):
    status, headers, _ = server.request("GET", "/2015-03-31/functions/%FF",
                                        headers={"Authorization": LAMBDA_AUTH})
    assert status == 400
    assert headers["x-amzn-errortype"].startswith("ValidationException")


def test_copy_sources_and_tag_sets_that_are_not_utf8_are_refused(server, s3, bucket):
    s3.put_object(Bucket=bucket, Key="src", Body=b"x")
    status, _, body = send(server, "PUT", f"/{bucket}/dst", [("x-amz-copy-source", f"/{bucket}/%FF")])
    assert (status, code_of(body)) == (400, "InvalidArgument")
    assert error_of(body)["Message"] == "Invalid copy source encoding."
    status, _, body = send(server, "PUT", f"/{bucket}/tagged", [("x-amz-tagging", "a=%FF")], b"x")
    assert (status, code_of(body)) == (400, "InvalidArgument")
    assert error_of(body)["ArgumentName"] == "x-amz-tagging"
    keys = [o["Key"] for o in s3.list_objects_v2(Bucket=bucket)["Contents"]]
    assert keys == ["src"]


def test_post_form_fields_and_file_names_that_are_not_utf8_are_refused(server, s3, bucket):
    boundary = "rotoboundary"
    for key, filename in ((b"k\xff", b"f"), (b"up/${filename}", b"\xfe")):
        body = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"key\"\r\n\r\n".encode() + key
                + f"\r\n--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"".encode()
                + filename + f"\"\r\n\r\nbody\r\n--{boundary}--\r\n".encode())
        status, _, answer = send(server, "POST", f"/{bucket}",
                                 [("Content-Type", f"multipart/form-data; boundary={boundary}")], body)
        assert (status, code_of(answer)) == (400, "MalformedPOSTRequest"), answer
    assert s3.list_objects_v2(Bucket=bucket)["KeyCount"] == 0


# --- user metadata -------------------------------------------------------------------------

def head_lines(server, path: str) -> list[bytes]:
    """A HEAD response's header lines, read from a socket (http.client, and so boto3, refuses
    a response of more than 100 headers, as it would from S3)."""
    with socket.create_connection((server.host, server.port)) as sock:
        sock.sendall(f"HEAD {path} HTTP/1.1\r\nHost: localhost\r\nAuthorization: {AUTH}\r\n"
                     "Connection: close\r\n\r\n".encode())
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = sock.recv(65536)
            assert chunk, data
            data += chunk
    return data.split(b"\r\n\r\n")[0].split(b"\r\n")


def metadata_lines(server, path: str) -> list[str]:
    lines = [line.decode() for line in head_lines(server, path)]
    return sorted(line for line in lines if line.lower().startswith("x-amz-meta-"))


def test_many_metadata_headers_are_limited_by_size_not_by_count(server, s3, bucket):
    meta = [(f"x-amz-meta-k{i:03d}", f"v{i}") for i in range(150)]
    status, _, body = send(server, "PUT", f"/{bucket}/many", meta, b"body")
    assert status == 200, body
    assert metadata_lines(server, f"/{bucket}/many") == sorted(f"{k}: {v}" for k, v in meta)
    s3.put_object(Bucket=bucket, Key="sdk", Body=b"x", Metadata={f"m{i:02d}": "v" for i in range(90)})
    assert len(metadata_lines(server, f"/{bucket}/sdk")) == 90


def test_metadata_is_limited_by_the_2kb_rule(server, s3, bucket):
    s3.put_object(Bucket=bucket, Key="fits", Body=b"x", Metadata={"k": "v" * 2047})
    err = fails(lambda: s3.put_object(Bucket=bucket, Key="over", Body=b"x", Metadata={"k": "v" * 2048}),
                "MetadataTooLarge", 400, "Your metadata headers exceed the maximum allowed metadata size.")
    assert err["MaxSizeAllowed"] == "2048"
    fails(lambda: s3.create_multipart_upload(Bucket=bucket, Key="over", Metadata={"a" * 1000: "b" * 1049}),
          "MetadataTooLarge", 400)
    fails(lambda: s3.copy_object(Bucket=bucket, Key="copy", CopySource=f"{bucket}/fits",
                                 MetadataDirective="REPLACE", Metadata={"k": "v" * 2048}),
          "MetadataTooLarge", 400)
    two_bytes = "\u00e9"  # UTF-8 is two bytes; the rule counts bytes, not characters
    for count, expected in ((1023, 200), (1024, 400)):
        word = "=?UTF-8?B?" + base64.b64encode((two_bytes * count).encode()).decode() + "?="
        status, _, body = send(server, "PUT", f"/{bucket}/utf8-{count}", [("x-amz-meta-k", word)], b"x")
        assert status == expected, body
    with pytest.raises(ClientError):
        s3.head_object(Bucket=bucket, Key="over")


def raw_header(server, path: str, name: str) -> str:
    _, headers, _ = send(server, "HEAD", path, [])
    values = [v for k, v in headers if k == name]
    assert len(values) == 1, headers
    return values[0]


def bytes_sent(encoded_word: str) -> bytes:
    """The bytes a client sent, from the encoded-word S3 answers for them: S3 read them as
    ISO-8859-1 and encodes that text's UTF-8."""
    match = re.fullmatch(r"=\?UTF-8\?B\?([A-Za-z0-9+/=]*)\?=", encoded_word)
    assert match, encoded_word
    return base64.b64decode(match.group(1)).decode("utf-8").encode("latin-1")


def test_non_ascii_metadata_bytes_come_back_exactly(server, s3, bucket):
    values = {"utf8": b"caf\xc3\xa9", "ff": b"\xff", "fe": b"\xfe", "high": bytes(range(0x80, 0x100))}
    for name, value in values.items():
        status, _, body = send(server, "PUT", f"/{bucket}/{name}", [("x-amz-meta-v", value)], b"x")
        assert status == 200, body
    for name, value in values.items():
        answered = raw_header(server, f"/{bucket}/{name}", "x-amz-meta-v")
        assert bytes_sent(answered) == value, name
    assert raw_header(server, f"/{bucket}/utf8", "x-amz-meta-v") == "=?UTF-8?B?Y2Fmw4PCqQ==?="


def test_encoded_word_metadata_is_stored_as_its_text_and_answered_the_same_way(server, s3, bucket):
    status, _, _ = send(server, "PUT", f"/{bucket}/word", [("x-amz-meta-city", "=?UTF-8?B?WsO8cmljaA==?="),
                                                          ("x-amz-meta-plain", "ascii stays")], b"x")
    assert status == 200
    assert raw_header(server, f"/{bucket}/word", "x-amz-meta-city") == "=?UTF-8?B?WsO8cmljaA==?="
    assert s3.head_object(Bucket=bucket, Key="word")["Metadata"]["plain"] == "ascii stays"


# --- bodies of unknown length --------------------------------------------------------------

def test_a_chunked_body_without_a_length_is_not_implemented(server, s3, bucket):
    status, _, body = send(server, "PUT", f"/{bucket}/te", [], b"hello", chunked=True)
    assert (status, code_of(body)) == (501, "NotImplemented")
    error = error_of(body)
    assert error["Message"] == "A header you provided implies functionality that is not implemented"
    assert error["Header"] == "Transfer-Encoding"
    with pytest.raises(ClientError):
        s3.head_object(Bucket=bucket, Key="te")
    upload = s3.create_multipart_upload(Bucket=bucket, Key="mp")["UploadId"]
    status, _, body = send(server, "PUT", f"/{bucket}/mp?partNumber=1&uploadId={upload}", [], b"part",
                           chunked=True)
    assert (status, code_of(body)) == (501, "NotImplemented")
    assert s3.list_parts(Bucket=bucket, Key="mp", UploadId=upload).get("Parts", []) == []


def test_an_aws_chunked_body_sent_with_transfer_encoding_chunked_is_stored(server, s3, bucket):
    payload = b"streamed by an SDK" * 100
    framed = f"{len(payload):x}\r\n".encode() + payload + b"\r\n0\r\n\r\n"
    headers = [("Content-Encoding", "aws-chunked"), ("x-amz-content-sha256", "STREAMING-UNSIGNED-PAYLOAD-TRAILER"),
               ("x-amz-decoded-content-length", str(len(payload)))]
    status, _, body = send(server, "PUT", f"/{bucket}/sdk", headers, framed, chunked=True)
    assert status == 200, body
    assert s3.get_object(Bucket=bucket, Key="sdk")["Body"].read() == payload


# --- a store on disk -----------------------------------------------------------------------

def blob_files(data: str) -> set[str]:
    return set(os.listdir(os.path.join(data, "blobs")))


def start_upload_part_and_kill_9(server, data: str, bucket: str, key: str, upload_id: str) -> None:
    """Starts a 64 MiB UploadPart, sends 2 MiB of it, waits for its `.part` file, then kill -9."""
    sock = socket.create_connection((server.host, server.port))
    head = (f"PUT /{bucket}/{key}?partNumber=2&uploadId={upload_id} HTTP/1.1\r\nHost: localhost\r\n"
            f"Authorization: {AUTH}\r\nContent-Length: {64 << 20}\r\n\r\n").encode()
    sock.sendall(head + b"\x01" * (2 << 20))
    deadline = time.monotonic() + 10
    while not any(n.endswith(".part") for n in blob_files(data)):
        assert time.monotonic() < deadline, "no .part file appeared"
        time.sleep(0.05)
    server.kill()
    sock.close()


def test_what_kill_9_leaves_is_swept_at_start_up_and_referenced_blobs_stay(tmp_path):
    data = str(tmp_path / "data")
    big, part = os.urandom(300_000), os.urandom(200_000)
    server = RotoServer("--data-dir", data).start()
    s3 = server.client("s3")
    s3.create_bucket(Bucket="keep")
    s3.put_object(Bucket="keep", Key="big", Body=big)
    s3.put_object(Bucket="keep", Key="small", Body=b"inline")
    upload = s3.create_multipart_upload(Bucket="keep", Key="mp")["UploadId"]
    etag = s3.upload_part(Bucket="keep", Key="mp", UploadId=upload, PartNumber=1, Body=part)["ETag"]
    referenced = blob_files(data)
    assert len(referenced) == 2
    start_upload_part_and_kill_9(server, data, "keep", "mp", upload)
    blobs = os.path.join(data, "blobs")
    with open(os.path.join(blobs, "0123456789abcdef0123456789abcdef"), "wb") as f:
        f.write(b"finished, never committed")
    with open(os.path.join(blobs, "fedcba9876543210fedcba9876543210.part"), "wb") as f:
        f.write(b"half written")
    with open(os.path.join(blobs, "notes.txt"), "wb") as f:
        f.write(b"not a blob: left alone")
    with sqlite3.connect(os.path.join(data, "roto.db")) as db:
        db.execute("INSERT INTO roto_blobs (id, data) VALUES ('i-00000000000000000000000000000000', x'00')")
    assert len(blob_files(data)) == 6
    with RotoServer("--data-dir", data) as server:
        assert blob_files(data) == referenced | {"notes.txt"}
        s3 = server.client("s3")
        assert s3.get_object(Bucket="keep", Key="big")["Body"].read() == big
        assert s3.get_object(Bucket="keep", Key="small")["Body"].read() == b"inline"
        s3.complete_multipart_upload(Bucket="keep", Key="mp", UploadId=upload,
                                     MultipartUpload={"Parts": [{"PartNumber": 1, "ETag": etag}]})
        got = s3.get_object(Bucket="keep", Key="mp")["Body"].read()
        assert hashlib.sha256(got).digest() == hashlib.sha256(part).digest()
    with sqlite3.connect(os.path.join(data, "roto.db")) as db:
        orphans = db.execute("SELECT count(*) FROM roto_blobs WHERE id LIKE 'i-0000%'").fetchone()[0]
    assert orphans == 0


def run_binary(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(binary()), "--port", "0", *args], capture_output=True, text=True, timeout=30)


def test_a_damaged_database_fails_start_up_naming_the_file(tmp_path):
    data = str(tmp_path / "data")
    with RotoServer("--data-dir", data) as server:
        s3 = server.client("s3")
        s3.create_bucket(Bucket="many")
        for i in range(300):
            s3.put_object(Bucket="many", Key=f"object-{i:04d}", Body=os.urandom(1000),
                          Metadata={"index": str(i)})
    db = os.path.join(data, "roto.db")
    with open(db, "r+b") as f:
        size = f.seek(0, os.SEEK_END)
        f.seek(size // 4)
        f.write(b"\xa5" * (size // 2))
    proc = run_binary("--data-dir", data)
    assert proc.returncode != 0
    assert f"--data-dir {data}: the store {db} is damaged" in proc.stderr, proc.stderr
    assert "restore it from a backup" in proc.stderr


def test_a_data_dir_that_is_a_file_is_named_with_its_flag(tmp_path):
    path = tmp_path / "plain"
    path.write_bytes(b"")
    proc = run_binary("--data-dir", str(path))
    assert proc.returncode != 0
    assert f"--data-dir {path}: cannot create {path}/blobs: Not a directory" in proc.stderr, proc.stderr


def test_lambda_code_and_layers_outlive_the_sweep(tmp_path):
    import io
    import zipfile

    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("index.py", "def handler(event, context):\n    return 'kept'\n")
        z.writestr("padding.bin", os.urandom(100_000))
    data = str(tmp_path / "data")
    with RotoServer("--data-dir", data) as server:
        lam = server.client("lambda")
        lam.publish_layer_version(LayerName="layer", Content={"ZipFile": buf.getvalue()})
        lam.create_function(FunctionName="f", Runtime="python3.12", Handler="index.handler",
                            Role="arn:aws:iam::000000000000:role/r", Code={"ZipFile": buf.getvalue()})
    kept = blob_files(data)
    assert len(kept) == 2
    with RotoServer("--data-dir", data) as server:
        assert blob_files(data) == kept
        assert server.client("lambda").invoke(FunctionName="f")["Payload"].read() == b'"kept"'
