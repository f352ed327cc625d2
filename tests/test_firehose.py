"""Amazon Data Firehose, black-box with boto3: delivery streams, records, buffering on the
server clock and delivery to S3."""

from __future__ import annotations

import gzip
import io
import re
import zipfile

import pytest
from botocore.exceptions import ClientError

ROLE = "arn:aws:iam::000000000000:role/firehose"
BUCKET = "landing"
BUCKET_ARN = f"arn:aws:s3:::{BUCKET}"


@pytest.fixture
def firehose(client):
    return client("firehose")


@pytest.fixture
def s3(client):
    s3 = client("s3")
    s3.create_bucket(Bucket=BUCKET)
    return s3


def error(excinfo):
    return excinfo.value.response["Error"]


def extended(**extra):
    config = {"RoleARN": ROLE, "BucketARN": BUCKET_ARN}
    config.update(extra)
    return config


def make(firehose, name="hose", **extra):
    firehose.create_delivery_stream(
        DeliveryStreamName=name, ExtendedS3DestinationConfiguration=extended(**extra)
    )
    return firehose.describe_delivery_stream(DeliveryStreamName=name)["DeliveryStreamDescription"]


def objects(s3, prefix=""):
    listed = s3.list_objects_v2(Bucket=BUCKET, Prefix=prefix).get("Contents", [])
    return {o["Key"]: s3.get_object(Bucket=BUCKET, Key=o["Key"])["Body"].read() for o in listed}


def delivered(server, s3, after=0):
    """The bucket's objects once a delivery after trace entry `after` has landed."""
    server.wait_for_delivery(service="firehose", target=BUCKET_ARN, outcome="delivered", after=after)
    return objects(s3)


def test_create_and_describe(firehose):
    arn = firehose.create_delivery_stream(
        DeliveryStreamName="hose",
        ExtendedS3DestinationConfiguration=extended(CompressionFormat="GZIP"),
        Tags=[{"Key": "team", "Value": "data"}],
    )["DeliveryStreamARN"]
    assert arn == "arn:aws:firehose:us-east-1:000000000000:deliverystream/hose"
    d = firehose.describe_delivery_stream(DeliveryStreamName="hose")["DeliveryStreamDescription"]
    assert d["DeliveryStreamStatus"] == "ACTIVE"
    assert d["DeliveryStreamType"] == "DirectPut"
    assert d["VersionId"] == "1"
    assert d["HasMoreDestinations"] is False
    assert d["DeliveryStreamEncryptionConfiguration"] == {"Status": "DISABLED"}
    [dest] = d["Destinations"]
    assert dest["DestinationId"] == "destinationId-000000000001"
    ext = dest["ExtendedS3DestinationDescription"]
    assert ext["BufferingHints"] == {"SizeInMBs": 5, "IntervalInSeconds": 300}
    assert ext["CompressionFormat"] == "GZIP"
    assert ext["EncryptionConfiguration"] == {"NoEncryptionConfig": "NoEncryption"}
    assert ext["CloudWatchLoggingOptions"] == {"Enabled": False}
    assert ext["S3BackupMode"] == "Disabled"
    assert dest["S3DestinationDescription"]["BucketARN"] == BUCKET_ARN


def test_create_errors(firehose):
    make(firehose)
    with pytest.raises(ClientError) as e:
        make(firehose)
    assert error(e)["Code"] == "ResourceInUseException"
    assert error(e)["Message"] == "Firehose hose under accountId 000000000000 already exists"
    with pytest.raises(ClientError) as e:
        firehose.create_delivery_stream(DeliveryStreamName="none")
    assert error(e)["Code"] == "InvalidArgumentException"
    assert error(e)["Message"] == "Exactly one destination configuration is supported for a Firehose"
    with pytest.raises(ClientError) as e:
        firehose.create_delivery_stream(
            DeliveryStreamName="two",
            ExtendedS3DestinationConfiguration=extended(),
            S3DestinationConfiguration=extended(),
        )
    assert error(e)["Code"] == "InvalidArgumentException"
    with pytest.raises(ClientError) as e:
        make(firehose, "expr", Prefix="data/!{timestamp:yyyy}/")
    assert error(e)["Message"] == (
        "ErrorOutputPrefix cannot be null or empty when Prefix contains expressions"
    )
    with pytest.raises(ClientError) as e:
        firehose.create_delivery_stream(
            DeliveryStreamName="bad name", ExtendedS3DestinationConfiguration=extended()
        )
    assert error(e)["Code"] == "ValidationException"
    with pytest.raises(ClientError) as e:
        firehose.describe_delivery_stream(DeliveryStreamName="missing")
    assert error(e)["Code"] == "ResourceNotFoundException"
    assert error(e)["Message"] == "Firehose missing under account 000000000000 not found."
    assert e.value.response["ResponseMetadata"]["HTTPStatusCode"] == 400


def test_list_pages_and_filters_by_type(firehose, client):
    kinesis = client("kinesis")
    kinesis.create_stream(StreamName="src", ShardCount=1)
    stream_arn = kinesis.describe_stream_summary(StreamName="src")["StreamDescriptionSummary"]["StreamARN"]
    for name in ["c", "a", "b"]:
        make(firehose, name)
    firehose.create_delivery_stream(
        DeliveryStreamName="k",
        DeliveryStreamType="KinesisStreamAsSource",
        KinesisStreamSourceConfiguration={"KinesisStreamARN": stream_arn, "RoleARN": ROLE},
        ExtendedS3DestinationConfiguration=extended(),
    )
    page = firehose.list_delivery_streams(Limit=2)
    assert page["DeliveryStreamNames"] == ["a", "b"]
    assert page["HasMoreDeliveryStreams"] is True
    page = firehose.list_delivery_streams(Limit=2, ExclusiveStartDeliveryStreamName="b")
    assert page == {**page, "DeliveryStreamNames": ["c", "k"], "HasMoreDeliveryStreams": False}
    direct = firehose.list_delivery_streams(DeliveryStreamType="DirectPut")["DeliveryStreamNames"]
    assert direct == ["a", "b", "c"]
    sourced = firehose.list_delivery_streams(DeliveryStreamType="KinesisStreamAsSource")
    assert sourced["DeliveryStreamNames"] == ["k"]
    d = firehose.describe_delivery_stream(DeliveryStreamName="k")["DeliveryStreamDescription"]
    assert d["Source"]["KinesisStreamSourceDescription"]["KinesisStreamARN"] == stream_arn
    with pytest.raises(ClientError) as e:
        firehose.put_record(DeliveryStreamName="k", Record={"Data": b"x"})
    assert error(e)["Code"] == "InvalidArgumentException"
    assert error(e)["Message"] == (
        "This operation is not permitted on KinesisStreamAsSource delivery stream type."
    )


def test_delete(firehose):
    make(firehose)
    firehose.delete_delivery_stream(DeliveryStreamName="hose")
    assert firehose.list_delivery_streams()["DeliveryStreamNames"] == []
    with pytest.raises(ClientError) as e:
        firehose.delete_delivery_stream(DeliveryStreamName="hose")
    assert error(e)["Code"] == "ResourceNotFoundException"


def test_update_destination_checks_and_bumps_the_version(firehose):
    make(firehose)
    firehose.update_destination(
        DeliveryStreamName="hose",
        CurrentDeliveryStreamVersionId="1",
        DestinationId="destinationId-000000000001",
        ExtendedS3DestinationUpdate={"BufferingHints": {"IntervalInSeconds": 60}, "Prefix": "p/"},
    )
    d = firehose.describe_delivery_stream(DeliveryStreamName="hose")["DeliveryStreamDescription"]
    assert d["VersionId"] == "2"
    assert "LastUpdateTimestamp" in d
    ext = d["Destinations"][0]["ExtendedS3DestinationDescription"]
    assert ext["BufferingHints"] == {"SizeInMBs": 5, "IntervalInSeconds": 60}
    assert ext["Prefix"] == "p/"
    with pytest.raises(ClientError) as e:
        firehose.update_destination(
            DeliveryStreamName="hose",
            CurrentDeliveryStreamVersionId="1",
            DestinationId="destinationId-000000000001",
            ExtendedS3DestinationUpdate={"Prefix": "q/"},
        )
    assert error(e)["Code"] == "ConcurrentModificationException"
    assert error(e)["Message"] == (
        "Cannot update firehose: hose since the current version id: 2 and specified version id: 1 do not match"
    )
    with pytest.raises(ClientError) as e:
        firehose.update_destination(
            DeliveryStreamName="hose",
            CurrentDeliveryStreamVersionId="2",
            DestinationId="destinationId-000000000001",
            HttpEndpointDestinationUpdate={"EndpointConfiguration": {"Url": "https://x"}},
        )
    assert error(e)["Message"] == (
        "Changing the destination type to or from HttpEndpoint is not supported at this time."
    )


def test_tags(firehose):
    make(firehose)
    firehose.tag_delivery_stream(
        DeliveryStreamName="hose", Tags=[{"Key": "a", "Value": "1"}, {"Key": "b", "Value": "2"}]
    )
    firehose.tag_delivery_stream(DeliveryStreamName="hose", Tags=[{"Key": "a", "Value": "3"}])
    tags = firehose.list_tags_for_delivery_stream(DeliveryStreamName="hose")
    assert tags["Tags"] == [{"Key": "a", "Value": "3"}, {"Key": "b", "Value": "2"}]
    assert tags["HasMoreTags"] is False
    page = firehose.list_tags_for_delivery_stream(DeliveryStreamName="hose", Limit=1)
    assert page["Tags"] == [{"Key": "a", "Value": "3"}] and page["HasMoreTags"] is True
    firehose.untag_delivery_stream(DeliveryStreamName="hose", TagKeys=["a"])
    assert firehose.list_tags_for_delivery_stream(DeliveryStreamName="hose")["Tags"] == [
        {"Key": "b", "Value": "2"}
    ]
    with pytest.raises(ClientError) as e:
        firehose.tag_delivery_stream(
            DeliveryStreamName="hose", Tags=[{"Key": f"k{i}", "Value": "v"} for i in range(50)]
        )
    assert error(e)["Code"] == "LimitExceededException"


def test_encryption_start_and_stop(firehose):
    make(firehose)
    firehose.start_delivery_stream_encryption(
        DeliveryStreamName="hose",
        DeliveryStreamEncryptionConfigurationInput={"KeyType": "AWS_OWNED_CMK"},
    )
    d = firehose.describe_delivery_stream(DeliveryStreamName="hose")["DeliveryStreamDescription"]
    assert d["DeliveryStreamEncryptionConfiguration"] == {"KeyType": "AWS_OWNED_CMK", "Status": "ENABLED"}
    assert firehose.put_record(DeliveryStreamName="hose", Record={"Data": b"x"})["Encrypted"] is True
    firehose.stop_delivery_stream_encryption(DeliveryStreamName="hose")
    d = firehose.describe_delivery_stream(DeliveryStreamName="hose")["DeliveryStreamDescription"]
    assert d["DeliveryStreamEncryptionConfiguration"] == {"Status": "DISABLED"}
    with pytest.raises(ClientError) as e:
        firehose.start_delivery_stream_encryption(
            DeliveryStreamName="hose",
            DeliveryStreamEncryptionConfigurationInput={"KeyType": "CUSTOMER_MANAGED_CMK"},
        )
    assert error(e)["Code"] == "InvalidArgumentException"


def test_put_record_limits(firehose):
    make(firehose)
    with pytest.raises(ClientError) as e:
        firehose.put_record(DeliveryStreamName="hose", Record={"Data": b"x" * (1024000 + 1)})
    assert error(e)["Code"] == "ValidationException"
    with pytest.raises(ClientError) as e:
        firehose.put_record_batch(
            DeliveryStreamName="hose", Records=[{"Data": b"x"}] * 501
        )
    assert error(e)["Code"] == "ValidationException"
    with pytest.raises(ClientError) as e:
        firehose.put_record_batch(
            DeliveryStreamName="hose", Records=[{"Data": b"x" * 1024000}] * 5
        )
    assert error(e)["Code"] == "InvalidArgumentException"
    out = firehose.put_record_batch(DeliveryStreamName="hose", Records=[{"Data": b"a"}] * 3)
    assert out["FailedPutCount"] == 0
    assert len(out["RequestResponses"]) == 3
    assert all(len(r["RecordId"]) == 224 for r in out["RequestResponses"])
    with pytest.raises(ClientError) as e:
        firehose.put_record(DeliveryStreamName="missing", Record={"Data": b"x"})
    assert error(e)["Code"] == "ResourceNotFoundException"


def test_records_wait_for_the_interval_then_land_in_s3(server, firehose, s3):
    make(firehose, BufferingHints={"IntervalInSeconds": 60, "SizeInMBs": 1})
    firehose.put_record(DeliveryStreamName="hose", Record={"Data": b'{"n":1}\n'})
    firehose.put_record_batch(
        DeliveryStreamName="hose", Records=[{"Data": b'{"n":2}\n'}, {"Data": b'{"n":3}\n'}]
    )
    assert objects(s3) == {}
    server.advance_clock(61)
    found = delivered(server, s3)
    [(key, body)] = found.items()
    assert body == b'{"n":1}\n{"n":2}\n{"n":3}\n'
    pattern = r"\d{4}/\d{2}/\d{2}/\d{2}/hose-1-\d{4}-\d{2}-\d{2}-\d{2}-\d{2}-\d{2}-[0-9a-f-]{36}"
    assert re.fullmatch(pattern, key), key


def test_size_hint_flushes_without_waiting(server, firehose, s3):
    make(firehose, BufferingHints={"IntervalInSeconds": 900, "SizeInMBs": 1})
    chunk = b"x" * 500_000
    firehose.put_record_batch(DeliveryStreamName="hose", Records=[{"Data": chunk}] * 3)
    first = server.wait_for_delivery(service="firehose", target=BUCKET_ARN, outcome="delivered")
    assert [len(b) for b in objects(s3).values()] == [1_000_000]
    server.advance_clock(901)
    delivered(server, s3, after=first["seq"])
    assert sorted(len(b) for b in objects(s3).values()) == [500_000, 1_000_000]


def test_zero_interval_and_compression(server, firehose, s3):
    make(firehose, "gz", BufferingHints={"IntervalInSeconds": 0}, CompressionFormat="GZIP", Prefix="g/")
    firehose.put_record(DeliveryStreamName="gz", Record={"Data": b"hello"})
    first = server.wait_for_delivery(service="firehose", target=BUCKET_ARN, outcome="delivered")
    [(key, body)] = objects(s3).items()
    assert key.startswith("g/") and key.endswith(".gz")
    assert gzip.decompress(body) == b"hello"
    make(firehose, "zp", BufferingHints={"IntervalInSeconds": 0}, CompressionFormat="ZIP", Prefix="z/")
    firehose.put_record(DeliveryStreamName="zp", Record={"Data": b"zipped"})
    server.wait_for_delivery(service="firehose", outcome="delivered", after=first["seq"])
    [(key, body)] = objects(s3, "z/").items()
    assert key.endswith(".zip")
    archive = zipfile.ZipFile(io.BytesIO(body))
    [name] = archive.namelist()
    assert archive.read(name) == b"zipped"


def test_custom_prefix_expressions(server, firehose, s3):
    make(
        firehose,
        BufferingHints={"IntervalInSeconds": 0},
        Prefix="year=!{timestamp:yyyy}/!{firehose:random-string}/",
        ErrorOutputPrefix="errors/!{firehose:error-output-type}/",
        FileExtension=".json",
    )
    firehose.put_record(DeliveryStreamName="hose", Record={"Data": b"{}"})
    [key] = delivered(server, s3)
    assert re.fullmatch(r"year=\d{4}/[a-z0-9]{11}/hose-1-.*\.json", key), key


def test_missing_bucket_fails_the_delivery(server, firehose, client):
    make(firehose, BufferingHints={"IntervalInSeconds": 0})
    firehose.put_record(DeliveryStreamName="hose", Record={"Data": b"x"})
    entry = server.wait_for_delivery(service="firehose", target=BUCKET_ARN, outcome="retrying")
    assert entry["detail"].startswith("S3.NoSuchBucket")


def test_lua_setup_seeds_a_stream_that_delivers(tmp_path):
    from roto_server import RotoServer

    path = tmp_path / "setup.lua"
    path.write_text("""
        aws.s3.CreateBucket{Bucket = "landing"}
        aws.firehose.CreateDeliveryStream{
          DeliveryStreamName = "seeded",
          ExtendedS3DestinationConfiguration = {
            RoleARN = "arn:aws:iam::000000000000:role/firehose",
            BucketARN = "arn:aws:s3:::landing",
            BufferingHints = {IntervalInSeconds = 0},
          },
        }
        aws.firehose.PutRecord{DeliveryStreamName = "seeded", Record = {Data = "from lua"}}
    """)
    with RotoServer("--ephemeral", "--setup", str(path)) as s:
        s.wait_for_delivery(service="firehose", target=BUCKET_ARN, outcome="delivered")
        s3 = s.client("s3")
        [obj] = s3.list_objects_v2(Bucket=BUCKET)["Contents"]
        assert s3.get_object(Bucket=BUCKET, Key=obj["Key"])["Body"].read() == b"from lua"
