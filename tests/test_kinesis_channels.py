"""Kinesis channels, black-box with boto3: a stream's delivery to S3 or S3 Tables kept as
configuration, with AWS's checks, statuses, paging, tags and errors."""

from __future__ import annotations

import pytest
from botocore.exceptions import ClientError

ROLE = "arn:aws:iam::000000000000:role/channel-role"
BUCKET = "arn:aws:s3:::channel-bucket"
OWNER = "000000000000"


@pytest.fixture
def kinesis(client):
    return client("kinesis")


def error(excinfo):
    return excinfo.value.response["Error"]


def on_demand(kinesis, name="s"):
    kinesis.create_stream(StreamName=name, StreamModeDetails={"StreamMode": "ON_DEMAND"})
    return kinesis.describe_stream_summary(StreamName=name)["StreamDescriptionSummary"]["StreamARN"]


def s3_destination(**extra):
    storage = {"BucketARN": BUCKET, "ExpectedBucketOwner": OWNER, "CompressionType": "GZIP"}
    return {"StorageConfiguration": storage, **extra}


def tables_destination():
    table = {
        "TableBucketARN": "arn:aws:s3tables:us-east-1:000000000000:bucket/tables",
        "Namespace": "analytics",
        "TableName": "clicks",
        "CompressionType": "ZSTD",
        "PartitionSpec": {"PartitionFields": [{"Transform": "TIME_HOUR", "SourceName": "ts"}]},
    }
    return {
        "DeadLetterQueueS3Configuration": {"BucketARN": BUCKET, "ExpectedBucketOwner": OWNER},
        "S3TablesConfigurationList": [table],
    }


def make_channel(kinesis, stream_arn, name="c", fmt="JSON", **kwargs):
    record = {"RecordFormatType": fmt}
    if "schema" in kwargs:
        record["GSRSchemaARN"] = kwargs.pop("schema")
    kwargs.setdefault("S3DestinationConfiguration", s3_destination())
    return kinesis.create_channel(
        ChannelName=name,
        ServiceExecutionRoleARN=ROLE,
        StreamConfigurationList=[{"StreamARN": stream_arn, "RecordConfiguration": record}],
        **kwargs,
    )["ChannelDescription"]


def test_create_describe_list_update_delete(kinesis):
    stream = on_demand(kinesis)
    created = make_channel(kinesis, stream, "orders", Tags={"team": "data"})
    assert created["ChannelStatus"] == "CREATING"
    arn = created["ChannelARN"]
    assert arn == f"arn:aws:kinesis:us-east-1:000000000000:channel/{created['ChannelId']}"
    kinesis.get_waiter("channel_active").wait(ChannelARN=arn, WaiterConfig={"Delay": 1, "MaxAttempts": 2})
    described = kinesis.describe_channel(ChannelARN=arn)["ChannelDescription"]
    assert described["ChannelStatus"] == "ACTIVE"
    assert described["ChannelName"] == "orders"
    assert described["ServiceExecutionRoleARN"] == ROLE
    [source] = described["StreamConfigurationList"]
    assert source["StreamARN"] == stream and source["RecordConfiguration"] == {"RecordFormatType": "JSON"}
    assert source["StreamCreationTimestamp"].year >= 2024
    destination = described["S3DestinationConfiguration"]
    assert destination["DataFreshnessInSeconds"] == 300
    assert destination["StorageConfiguration"]["CompressionType"] == "GZIP"
    assert destination["DeadLetterQueueS3Configuration"] == {
        "BucketARN": BUCKET, "ExpectedBucketOwner": OWNER, "ErrorOutputPrefix": "error/",
    }
    assert described["LoggingConfiguration"] == {"CloudWatchLogs": {"Enabled": False}}
    assert "S3TablesDestinationConfiguration" not in described

    updated = kinesis.update_channel(
        ChannelARN=arn,
        S3DestinationConfiguration={"DataFreshnessInSeconds": 60},
        LoggingConfiguration={"CloudWatchLogs": {"Enabled": True}},
    )["ChannelDescription"]
    assert updated["ChannelStatus"] == "UPDATING"
    after = kinesis.describe_channel(ChannelARN=arn)["ChannelDescription"]
    assert after["S3DestinationConfiguration"]["DataFreshnessInSeconds"] == 60
    assert after["LoggingConfiguration"]["CloudWatchLogs"] == {
        "Enabled": True,
        "LogGroupName": f"/aws/kinesis/orders/{created['ChannelId']}",
        "LogStreamName": "DestinationDelivery",
    }

    [summary] = kinesis.list_channels()["ChannelSummaries"]
    assert (summary["ChannelName"], summary["ChannelARN"], summary["ChannelStatus"]) == ("orders", arn, "ACTIVE")
    assert summary["ChannelDestinationType"] == "S3"
    assert summary["Streams"][0]["StreamARN"] == stream
    assert kinesis.list_tags_for_resource(ResourceARN=arn)["Tags"] == [{"Key": "team", "Value": "data"}]

    kinesis.delete_channel(ChannelARN=arn)
    with pytest.raises(ClientError) as e:
        kinesis.describe_channel(ChannelARN=arn)
    assert error(e)["Code"] == "ResourceNotFoundException"
    assert arn in error(e)["Message"]
    assert kinesis.list_channels()["ChannelSummaries"] == []


def test_s3_tables_destination(kinesis):
    stream = on_demand(kinesis)
    schema = "arn:aws:glue:us-east-1:000000000000:schema/registry/clicks"
    created = kinesis.create_channel(
        ChannelName="tables",
        ServiceExecutionRoleARN=ROLE,
        StreamConfigurationList=[{
            "StreamARN": stream,
            "RecordConfiguration": {"RecordFormatType": "GSR_JSON", "GSRSchemaARN": schema},
        }],
        S3TablesDestinationConfiguration=tables_destination(),
        LoggingConfiguration={"CloudWatchLogs": {"Enabled": True, "LogGroupName": "/mine", "LogStreamName": "x"}},
    )["ChannelDescription"]
    described = kinesis.describe_channel(ChannelARN=created["ChannelARN"])["ChannelDescription"]
    tables = described["S3TablesDestinationConfiguration"]
    assert tables["DataFreshnessInSeconds"] == 300
    assert tables["S3TablesConfigurationList"][0]["TableName"] == "clicks"
    assert described["LoggingConfiguration"]["CloudWatchLogs"]["LogGroupName"] == "/mine"
    assert kinesis.list_channels()["ChannelSummaries"][0]["ChannelDestinationType"] == "S3_TABLES"
    # Only the channel's own destination kind can be updated.
    with pytest.raises(ClientError) as e:
        kinesis.update_channel(
            ChannelARN=created["ChannelARN"], S3DestinationConfiguration={"DataFreshnessInSeconds": 30}
        )
    assert error(e)["Code"] == "ValidationException"
    kinesis.update_channel(
        ChannelARN=created["ChannelARN"], S3TablesDestinationConfiguration={"DataFreshnessInSeconds": 30}
    )
    described = kinesis.describe_channel(ChannelARN=created["ChannelARN"])["ChannelDescription"]
    assert described["S3TablesDestinationConfiguration"]["DataFreshnessInSeconds"] == 30


@pytest.mark.parametrize(
    "kwargs, fmt, message",
    [
        ({"S3DestinationConfiguration": None}, "JSON", "Exactly one of"),
        ({"S3TablesDestinationConfiguration": tables_destination()}, "JSON", "Exactly one of"),
        ({}, "GSR_JSON", "GSR_JSON"),
    ],
)
def test_destination_and_record_format_are_checked(kinesis, kwargs, fmt, message):
    stream = on_demand(kinesis)
    call = {"S3DestinationConfiguration": s3_destination(), **kwargs}
    call = {k: v for k, v in call.items() if v is not None}
    with pytest.raises(ClientError) as e:
        kinesis.create_channel(
            ChannelName="c",
            ServiceExecutionRoleARN=ROLE,
            StreamConfigurationList=[{"StreamARN": stream, "RecordConfiguration": {"RecordFormatType": fmt}}],
            **call,
        )
    assert error(e)["Code"] == "ValidationException"
    assert message in error(e)["Message"]


def test_tables_need_a_schema_and_a_structured_format(kinesis):
    stream = on_demand(kinesis)
    for record in ({"RecordFormatType": "JSON"}, {"RecordFormatType": "STRING", "GSRSchemaARN": "arn:aws:glue:us-east-1:000000000000:schema/r/s"}):
        with pytest.raises(ClientError) as e:
            kinesis.create_channel(
                ChannelName="c",
                ServiceExecutionRoleARN=ROLE,
                StreamConfigurationList=[{"StreamARN": stream, "RecordConfiguration": record}],
                S3TablesDestinationConfiguration=tables_destination(),
            )
        assert error(e)["Code"] == "ValidationException"


def test_source_stream_must_exist_be_on_demand_and_be_one(kinesis):
    kinesis.create_stream(StreamName="prov", ShardCount=1)
    prov = kinesis.describe_stream_summary(StreamName="prov")["StreamDescriptionSummary"]["StreamARN"]
    with pytest.raises(ClientError) as e:
        make_channel(kinesis, prov)
    assert error(e)["Code"] == "ValidationException" and "on-demand" in error(e)["Message"]
    with pytest.raises(ClientError) as e:
        make_channel(kinesis, prov.replace("stream/prov", "stream/missing"))
    assert error(e)["Code"] == "ResourceNotFoundException"
    stream = on_demand(kinesis)
    entry = {"StreamARN": stream, "RecordConfiguration": {"RecordFormatType": "JSON"}}
    with pytest.raises(ClientError) as e:
        kinesis.create_channel(
            ChannelName="two", ServiceExecutionRoleARN=ROLE, StreamConfigurationList=[entry, entry],
            S3DestinationConfiguration=s3_destination(),
        )
    assert error(e)["Code"] == "ValidationException"


def test_names_are_unique_and_validated(kinesis):
    stream = on_demand(kinesis)
    make_channel(kinesis, stream, "dup")
    with pytest.raises(ClientError) as e:
        make_channel(kinesis, stream, "dup")
    assert error(e)["Code"] == "ResourceInUseException"
    with pytest.raises(ClientError) as e:
        make_channel(kinesis, stream, "bad name!")
    assert error(e)["Code"] == "ValidationException"


def test_encryption_key_is_checked_with_kms(kinesis, client):
    stream = on_demand(kinesis)
    with pytest.raises(ClientError) as e:
        make_channel(kinesis, stream, EncryptionConfiguration={"EncryptionType": "KMS", "KeyId": "alias/missing"})
    assert error(e)["Code"] == "KMSNotFoundException"
    with pytest.raises(ClientError) as e:
        make_channel(kinesis, stream, EncryptionConfiguration={"EncryptionType": "KMS", "KeyId": "alias/aws/kinesis"})
    assert error(e)["Code"] == "ValidationException"
    kms = client("kms")
    key = kms.create_key()["KeyMetadata"]["KeyId"]
    created = make_channel(kinesis, stream, EncryptionConfiguration={"EncryptionType": "KMS", "KeyId": key})
    assert created["EncryptionConfiguration"] == {"EncryptionType": "KMS", "KeyId": key}
    kms.disable_key(KeyId=key)
    with pytest.raises(ClientError) as e:
        make_channel(kinesis, stream, "other", EncryptionConfiguration={"EncryptionType": "KMS", "KeyId": key})
    assert error(e)["Code"] == "KMSDisabledException"


def test_stream_with_channels_cannot_be_deleted_or_provisioned(kinesis):
    stream = on_demand(kinesis)
    arn = make_channel(kinesis, stream)["ChannelARN"]
    with pytest.raises(ClientError) as e:
        kinesis.delete_stream(StreamName="s")
    assert error(e)["Code"] == "ResourceInUseException" and "channel" in error(e)["Message"]
    with pytest.raises(ClientError) as e:
        kinesis.update_stream_mode(StreamARN=stream, StreamModeDetails={"StreamMode": "PROVISIONED"})
    assert error(e)["Code"] == "ResourceInUseException"
    kinesis.delete_channel(ChannelARN=arn)
    kinesis.delete_stream(StreamName="s")


def test_list_pages_and_filters_by_stream(kinesis):
    first = on_demand(kinesis, "one")
    second = on_demand(kinesis, "two")
    for i in range(5):
        make_channel(kinesis, first, f"a{i}")
    make_channel(kinesis, second, "b")
    page = kinesis.list_channels(MaxResults=2)
    assert [s["ChannelName"] for s in page["ChannelSummaries"]] == ["a0", "a1"]
    names = [s["ChannelName"] for p in kinesis.get_paginator("list_channels").paginate(PaginationConfig={"PageSize": 2}) for s in p["ChannelSummaries"]]
    assert names == ["a0", "a1", "a2", "a3", "a4", "b"]
    filtered = kinesis.list_channels(StreamFilter=[{"StreamARN": second}])["ChannelSummaries"]
    assert [s["ChannelName"] for s in filtered] == ["b"]
    with pytest.raises(ClientError) as e:
        kinesis.list_channels(NextToken="nonsense")
    assert error(e)["Code"] == "InvalidArgumentException"


def test_tags_by_channel_arn(kinesis):
    stream = on_demand(kinesis)
    arn = make_channel(kinesis, stream)["ChannelARN"]
    kinesis.tag_resource(ResourceARN=arn, Tags={"a": "1", "b": "2"})
    kinesis.untag_resource(ResourceARN=arn, TagKeys=["a"])
    assert kinesis.list_tags_for_resource(ResourceARN=arn)["Tags"] == [{"Key": "b", "Value": "2"}]
    with pytest.raises(ClientError) as e:
        kinesis.tag_resource(ResourceARN=arn, Tags={f"k{i}": "v" for i in range(50)})
    assert error(e)["Code"] == "InvalidArgumentException"


def test_update_needs_a_change_and_missing_channels_are_not_found(kinesis):
    stream = on_demand(kinesis)
    arn = make_channel(kinesis, stream)["ChannelARN"]
    with pytest.raises(ClientError) as e:
        kinesis.update_channel(ChannelARN=arn)
    assert error(e)["Code"] == "ValidationException"
    with pytest.raises(ClientError) as e:
        kinesis.update_channel(ChannelARN=arn, S3DestinationConfiguration={"DataFreshnessInSeconds": 0})
    assert error(e)["Code"] == "ValidationException"
    missing = arn[: arn.rindex("/") + 1] + "0" * 36
    for call in (kinesis.describe_channel, kinesis.delete_channel):
        with pytest.raises(ClientError) as e:
            call(ChannelARN=missing)
        assert error(e)["Code"] == "ResourceNotFoundException"
    with pytest.raises(ClientError) as e:
        kinesis.list_tags_for_resource(ResourceARN=missing)
    assert error(e)["Code"] == "ResourceNotFoundException"
