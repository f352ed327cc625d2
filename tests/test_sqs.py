"""SQS over the JSON protocol, through boto3 and the AWS CLI.

boto3 does not check SQS's MD5 digests itself (the Java, Go and .NET SDKs do), so these
tests recompute every digest independently from AWS's documented encoding.
"""

from __future__ import annotations

import hashlib
import json
import struct
import threading
import time

import pytest
from botocore.exceptions import ClientError

from fifo_helpers import assert_fifo_delivery, consume_fifo, twin_producers


def md5_of_attributes(attributes: dict) -> str:
    """AWS's documented MD5 of message attributes (or system attributes)."""
    buf = b""
    for name in sorted(attributes):
        attr = attributes[name]
        for part in (name.encode(), attr["DataType"].encode()):
            buf += struct.pack(">I", len(part)) + part
        if "BinaryValue" in attr:
            value = attr["BinaryValue"]
            buf += b"\x02" + struct.pack(">I", len(value)) + value
        else:
            value = attr["StringValue"].encode()
            buf += b"\x01" + struct.pack(">I", len(value)) + value
    return hashlib.md5(buf).hexdigest()


def md5(text: str) -> str:
    return hashlib.md5(text.encode()).hexdigest()


def error_of(call, *args, **kwargs) -> dict:
    with pytest.raises(ClientError) as info:
        call(*args, **kwargs)
    return info.value.response


@pytest.fixture
def sqs(client):
    return client("sqs")


@pytest.fixture
def queue(sqs):
    return sqs.create_queue(QueueName="jobs")["QueueUrl"]


@pytest.fixture
def fifo(sqs):
    return sqs.create_queue(QueueName="jobs.fifo", Attributes={"FifoQueue": "true"})["QueueUrl"]


# --- queues ---------------------------------------------------------------------------


def test_create_queue_returns_a_url_on_the_addressed_host(sqs, server):
    url = sqs.create_queue(QueueName="orders")["QueueUrl"]
    assert url == f"{server.endpoint}/000000000000/orders"
    assert sqs.get_queue_url(QueueName="orders")["QueueUrl"] == url


def test_new_queue_has_aws_default_attributes(sqs, queue):
    before = int(time.time())
    attrs = sqs.get_queue_attributes(QueueUrl=queue, AttributeNames=["All"])["Attributes"]
    assert attrs["QueueArn"] == "arn:aws:sqs:us-east-1:000000000000:jobs"
    assert attrs["VisibilityTimeout"] == "30"
    assert attrs["MaximumMessageSize"] == "1048576"
    assert attrs["MessageRetentionPeriod"] == "345600"
    assert attrs["DelaySeconds"] == "0"
    assert attrs["ReceiveMessageWaitTimeSeconds"] == "0"
    assert attrs["SqsManagedSseEnabled"] == "true"
    for count in ("ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible",
                  "ApproximateNumberOfMessagesDelayed"):
        assert attrs[count] == "0"
    assert abs(int(attrs["CreatedTimestamp"]) - before) <= 2
    assert attrs["LastModifiedTimestamp"] == attrs["CreatedTimestamp"]
    assert "FifoQueue" not in attrs


def test_get_queue_attributes_returns_only_the_names_asked_for(sqs, queue):
    attrs = sqs.get_queue_attributes(QueueUrl=queue, AttributeNames=["VisibilityTimeout", "QueueArn"])
    assert attrs["Attributes"] == {
        "VisibilityTimeout": "30",
        "QueueArn": "arn:aws:sqs:us-east-1:000000000000:jobs",
    }
    assert "Attributes" not in sqs.get_queue_attributes(QueueUrl=queue)


def test_get_queue_attributes_rejects_unknown_names(sqs, queue):
    err = error_of(sqs.get_queue_attributes, QueueUrl=queue, AttributeNames=["Colour"])
    assert err["Error"]["Code"] == "InvalidAttributeName"
    assert err["Error"]["Message"] == "Unknown Attribute Colour."


def test_create_queue_stores_given_attributes(sqs):
    url = sqs.create_queue(QueueName="tuned", Attributes={
        "DelaySeconds": "5", "VisibilityTimeout": "60", "MaximumMessageSize": "2048",
        "MessageRetentionPeriod": "120", "ReceiveMessageWaitTimeSeconds": "3",
    })["QueueUrl"]
    attrs = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["All"])["Attributes"]
    assert (attrs["DelaySeconds"], attrs["VisibilityTimeout"], attrs["MaximumMessageSize"]) == ("5", "60", "2048")
    assert (attrs["MessageRetentionPeriod"], attrs["ReceiveMessageWaitTimeSeconds"]) == ("120", "3")


@pytest.mark.parametrize("name,value", [
    ("DelaySeconds", "901"), ("DelaySeconds", "-1"), ("MaximumMessageSize", "1023"),
    ("MaximumMessageSize", "1048577"), ("MessageRetentionPeriod", "59"),
    ("MessageRetentionPeriod", "1209601"), ("ReceiveMessageWaitTimeSeconds", "21"),
    ("VisibilityTimeout", "43201"), ("VisibilityTimeout", "soon"),
])
def test_create_queue_rejects_attribute_values_out_of_range(sqs, name, value):
    err = error_of(sqs.create_queue, QueueName="q", Attributes={name: value})
    assert err["Error"]["Code"] == "InvalidAttributeValue"
    assert err["Error"]["Message"] == f"Invalid value for the parameter {name}."
    assert err["ResponseMetadata"]["HTTPStatusCode"] == 400


def test_create_queue_accepts_the_one_mebibyte_maximum(sqs):
    url = sqs.create_queue(QueueName="big", Attributes={"MaximumMessageSize": "1048576"})["QueueUrl"]
    attrs = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["MaximumMessageSize"])
    assert attrs["Attributes"]["MaximumMessageSize"] == "1048576"


def test_create_queue_rejects_unknown_and_fifo_only_attributes_on_standard_queues(sqs):
    err = error_of(sqs.create_queue, QueueName="q", Attributes={"Colour": "red"})
    assert (err["Error"]["Code"], err["Error"]["Message"]) == ("InvalidAttributeName", "Unknown Attribute Colour.")
    err = error_of(sqs.create_queue, QueueName="q", Attributes={"ContentBasedDeduplication": "true"})
    assert err["Error"]["Code"] == "InvalidAttributeName"


@pytest.mark.parametrize("name", ["", "a" * 81, "has space", "dot.name", "q.fifo", "ünï"])
def test_create_queue_rejects_invalid_standard_names(sqs, name):
    err = error_of(sqs.create_queue, QueueName=name)
    assert err["Error"]["Code"] in ("InvalidParameterValue", "MissingParameter")
    if name:
        assert err["Error"]["Message"] == (
            "Can only include alphanumeric characters, hyphens, or underscores. 1 to 80 in length")


def test_create_queue_accepts_eighty_character_names(sqs):
    name = "a-_" * 26 + "bc"
    assert sqs.create_queue(QueueName=name)["QueueUrl"].endswith("/" + name)


@pytest.mark.parametrize("name", ["nofifo", "bad name.fifo", "a" * 76 + ".fifo", ".fifo"])
def test_fifo_queue_names_must_end_in_fifo(sqs, name):
    err = error_of(sqs.create_queue, QueueName=name, Attributes={"FifoQueue": "true"})
    assert err["Error"]["Code"] == "InvalidParameterValue"
    assert "must end with .fifo suffix" in err["Error"]["Message"]


def test_create_queue_is_idempotent_when_attributes_match(sqs):
    first = sqs.create_queue(QueueName="same", Attributes={"VisibilityTimeout": "10"})["QueueUrl"]
    again = sqs.create_queue(QueueName="same", Attributes={"VisibilityTimeout": "10"})["QueueUrl"]
    bare = sqs.create_queue(QueueName="same")["QueueUrl"]
    assert first == again == bare


def test_create_queue_with_different_attributes_is_queue_name_exists(sqs):
    sqs.create_queue(QueueName="same", Attributes={"VisibilityTimeout": "10"})
    with pytest.raises(sqs.exceptions.QueueNameExists) as info:
        sqs.create_queue(QueueName="same", Attributes={"VisibilityTimeout": "11"})
    err = info.value.response["Error"]
    assert err["Code"] == "QueueAlreadyExists"
    assert err["Message"] == (
        "A queue already exists with the same name and a different value for attribute VisibilityTimeout")
    assert info.value.response["ResponseMetadata"]["HTTPHeaders"]["x-amzn-query-error"] == "QueueAlreadyExists;Sender"


def test_redrive_policy_is_stored_compacted_and_needs_an_existing_target(sqs):
    dlq = sqs.create_queue(QueueName="dead")["QueueUrl"]
    arn = sqs.get_queue_attributes(QueueUrl=dlq, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    policy = json.dumps({"deadLetterTargetArn": arn, "maxReceiveCount": "3"})
    url = sqs.create_queue(QueueName="src", Attributes={"RedrivePolicy": policy})["QueueUrl"]
    stored = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["RedrivePolicy"])["Attributes"]
    assert json.loads(stored["RedrivePolicy"]) == {"deadLetterTargetArn": arn, "maxReceiveCount": 3}
    missing = json.dumps({"deadLetterTargetArn": arn + "x", "maxReceiveCount": 3})
    err = error_of(sqs.create_queue, QueueName="src2", Attributes={"RedrivePolicy": missing})
    assert err["Error"]["Code"] == "InvalidParameterValue"
    assert err["Error"]["Message"].endswith("Reason: Dead letter target does not exist.")
    err = error_of(sqs.create_queue, QueueName="src3", Attributes={"RedrivePolicy": "{not json"})
    assert err["Error"]["Code"] == "InvalidParameterValue"


def test_messages_received_max_receive_count_times_move_to_the_dead_letter_queue(sqs):
    dlq = sqs.create_queue(QueueName="dead")["QueueUrl"]
    arn = sqs.get_queue_attributes(QueueUrl=dlq, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    policy = json.dumps({"deadLetterTargetArn": arn, "maxReceiveCount": 2})
    src = sqs.create_queue(QueueName="src", Attributes={"RedrivePolicy": policy})["QueueUrl"]
    sent = sqs.send_message(QueueUrl=src, MessageBody="poison")
    for _ in range(2):
        assert sqs.receive_message(QueueUrl=src, VisibilityTimeout=0)["Messages"][0]["Body"] == "poison"
    assert "Messages" not in sqs.receive_message(QueueUrl=src)
    got = sqs.receive_message(QueueUrl=dlq, MessageSystemAttributeNames=["All"])["Messages"][0]
    assert got["MessageId"] == sent["MessageId"]
    assert got["Attributes"]["DeadLetterQueueSourceArn"] == "arn:aws:sqs:us-east-1:000000000000:src"
    assert got["Attributes"]["ApproximateReceiveCount"] == "1"


def test_get_queue_url_of_a_missing_queue_is_queue_does_not_exist(sqs):
    with pytest.raises(sqs.exceptions.QueueDoesNotExist) as info:
        sqs.get_queue_url(QueueName="ghost")
    response = info.value.response
    assert response["Error"]["Code"] == "AWS.SimpleQueueService.NonExistentQueue"
    assert response["Error"]["QueryErrorCode"] == "QueueDoesNotExist"
    assert response["Error"]["Message"] == "The specified queue does not exist."
    assert response["ResponseMetadata"]["HTTPStatusCode"] == 400
    assert response["ResponseMetadata"]["HTTPHeaders"]["x-amzn-query-error"] == (
        "AWS.SimpleQueueService.NonExistentQueue;Sender")


def test_queue_owner_account_selects_the_account(client, server):
    other = client("sqs", aws_access_key_id="111122223333")
    url = other.create_queue(QueueName="shared")["QueueUrl"]
    assert url == f"{server.endpoint}/111122223333/shared"
    mine = client("sqs")
    assert mine.get_queue_url(QueueName="shared", QueueOwnerAWSAccountId="111122223333")["QueueUrl"] == url
    with pytest.raises(mine.exceptions.QueueDoesNotExist):
        mine.get_queue_url(QueueName="shared")
    mine.send_message(QueueUrl=url, MessageBody="cross-account")
    got = other.receive_message(QueueUrl=url)["Messages"]
    assert got[0]["Body"] == "cross-account"


def test_queue_urls_in_other_forms_reach_the_same_queue(sqs, queue, server):
    for url in (f"http://sqs.us-east-1.localhost:{server.port}/000000000000/jobs",
                "https://sqs.us-east-1.amazonaws.com/000000000000/jobs"):
        sqs.send_message(QueueUrl=url, MessageBody=url)
    attrs = sqs.get_queue_attributes(QueueUrl=queue, AttributeNames=["ApproximateNumberOfMessages"])
    assert attrs["Attributes"]["ApproximateNumberOfMessages"] == "2"


def test_queues_are_separate_per_region(client):
    east, west = client("sqs"), client("sqs", region_name="eu-west-1")
    east.create_queue(QueueName="regional")
    assert "QueueUrls" not in west.list_queues()
    with pytest.raises(west.exceptions.QueueDoesNotExist):
        west.get_queue_url(QueueName="regional")


def test_delete_queue_removes_it(sqs, queue):
    sqs.send_message(QueueUrl=queue, MessageBody="x")
    sqs.delete_queue(QueueUrl=queue)
    with pytest.raises(sqs.exceptions.QueueDoesNotExist):
        sqs.get_queue_url(QueueName="jobs")
    with pytest.raises(sqs.exceptions.QueueDoesNotExist):
        sqs.delete_queue(QueueUrl=queue)
    with pytest.raises(sqs.exceptions.QueueDoesNotExist):
        sqs.send_message(QueueUrl=queue, MessageBody="x")
    url = sqs.create_queue(QueueName="jobs")["QueueUrl"]
    assert "Messages" not in sqs.receive_message(QueueUrl=url)


def test_list_queues_filters_by_prefix_and_pages(sqs, server):
    assert "QueueUrls" not in sqs.list_queues()
    for name in ("alpha-1", "alpha-2", "alpha-3", "beta"):
        sqs.create_queue(QueueName=name)
    urls = sqs.list_queues()["QueueUrls"]
    assert sorted(urls) == [f"{server.endpoint}/000000000000/{n}" for n in ("alpha-1", "alpha-2", "alpha-3", "beta")]
    assert len(sqs.list_queues(QueueNamePrefix="alpha")["QueueUrls"]) == 3
    page = sqs.list_queues(QueueNamePrefix="alpha", MaxResults=2)
    assert len(page["QueueUrls"]) == 2 and page["NextToken"]
    rest = sqs.list_queues(QueueNamePrefix="alpha", MaxResults=2, NextToken=page["NextToken"])
    assert len(rest["QueueUrls"]) == 1 and "NextToken" not in rest
    assert set(page["QueueUrls"]) | set(rest["QueueUrls"]) == set(sqs.list_queues(QueueNamePrefix="alpha")["QueueUrls"])
    paged = [u for p in sqs.get_paginator("list_queues").paginate(PaginationConfig={"PageSize": 1})
             for u in p.get("QueueUrls", [])]
    assert len(paged) == 4


def test_list_queues_rejects_max_results_out_of_range(sqs):
    err = error_of(sqs.list_queues, MaxResults=1001)
    assert err["Error"]["Code"] == "InvalidParameterValue"


# --- send and receive -----------------------------------------------------------------


def test_send_then_receive_returns_the_body_and_correct_md5s(sqs, queue):
    attrs = {
        "colour": {"DataType": "String", "StringValue": "blue"},
        "count": {"DataType": "Number", "StringValue": "42"},
        "blob": {"DataType": "Binary", "BinaryValue": b"\x00\xff\x10"},
        "custom": {"DataType": "Number.float", "StringValue": "1.5"},
    }
    sent = sqs.send_message(QueueUrl=queue, MessageBody="héllo wörld", MessageAttributes=attrs)
    assert sent["MD5OfMessageBody"] == md5("héllo wörld")
    assert sent["MD5OfMessageAttributes"] == md5_of_attributes(attrs)
    assert "MD5OfMessageSystemAttributes" not in sent
    got = sqs.receive_message(QueueUrl=queue, MessageAttributeNames=["All"])["Messages"]
    assert len(got) == 1
    message = got[0]
    assert message["MessageId"] == sent["MessageId"]
    assert message["Body"] == "héllo wörld"
    assert message["MD5OfBody"] == md5("héllo wörld")
    assert message["MessageAttributes"] == attrs
    assert message["MD5OfMessageAttributes"] == md5_of_attributes(attrs)


def test_receive_returns_only_the_message_attributes_asked_for(sqs, queue):
    attrs = {
        "a.one": {"DataType": "String", "StringValue": "1"},
        "a.two": {"DataType": "String", "StringValue": "2"},
        "b": {"DataType": "String", "StringValue": "3"},
    }
    sqs.send_message(QueueUrl=queue, MessageBody="x", MessageAttributes=attrs)
    message = sqs.receive_message(QueueUrl=queue, MessageAttributeNames=["a.*"], VisibilityTimeout=0)["Messages"][0]
    wanted = {k: v for k, v in attrs.items() if k.startswith("a.")}
    assert message["MessageAttributes"] == wanted
    assert message["MD5OfMessageAttributes"] == md5_of_attributes(wanted)
    message = sqs.receive_message(QueueUrl=queue, MessageAttributeNames=["b"], VisibilityTimeout=0)["Messages"][0]
    assert message["MessageAttributes"] == {"b": attrs["b"]}
    message = sqs.receive_message(QueueUrl=queue, VisibilityTimeout=0)["Messages"][0]
    assert "MessageAttributes" not in message and "MD5OfMessageAttributes" not in message
    message = sqs.receive_message(QueueUrl=queue, MessageAttributeNames=[".*"])["Messages"][0]
    assert message["MessageAttributes"] == attrs


def test_system_attributes_are_returned_when_asked_for(sqs, queue):
    trace = {"AWSTraceHeader": {"DataType": "String", "StringValue": "Root=1-5759e988-bd862e3fe1be46a994272793"}}
    before = int(time.time() * 1000)
    sent = sqs.send_message(QueueUrl=queue, MessageBody="x", MessageSystemAttributes=trace)
    assert sent["MD5OfMessageSystemAttributes"] == md5_of_attributes(trace)
    message = sqs.receive_message(QueueUrl=queue, MessageSystemAttributeNames=["All"], VisibilityTimeout=0)["Messages"][0]
    attrs = message["Attributes"]
    assert attrs["SenderId"] == "000000000000"
    assert attrs["ApproximateReceiveCount"] == "1"
    assert attrs["AWSTraceHeader"] == trace["AWSTraceHeader"]["StringValue"]
    assert before - 5 <= int(attrs["SentTimestamp"]) <= int(attrs["ApproximateFirstReceiveTimestamp"])
    again = sqs.receive_message(QueueUrl=queue, AttributeNames=["ApproximateReceiveCount", "SentTimestamp"])
    assert again["Messages"][0]["Attributes"] == {"ApproximateReceiveCount": "2", "SentTimestamp": attrs["SentTimestamp"]}
    third = sqs.receive_message(QueueUrl=queue, VisibilityTimeout=0)
    assert third.get("Messages") in (None, []) or "Attributes" not in third["Messages"][0]


def test_send_message_rejects_a_missing_or_empty_body(sqs, queue):
    err = error_of(sqs.send_message, QueueUrl=queue, MessageBody="")
    assert (err["Error"]["Code"], err["Error"]["Message"]) == (
        "MissingParameter", "The request must contain the parameter MessageBody.")


def test_every_json_error_carries_its_query_code_header(sqs, queue):
    err = error_of(sqs.send_message, QueueUrl=queue, MessageBody="x", DelaySeconds=901)
    assert err["ResponseMetadata"]["HTTPHeaders"]["x-amzn-query-error"] == "InvalidParameterValue;Sender"
    err = error_of(sqs.delete_message, QueueUrl=queue, ReceiptHandle="junk")
    assert err["ResponseMetadata"]["HTTPHeaders"]["x-amzn-query-error"] == "ReceiptHandleIsInvalid;Sender"


def test_send_message_rejects_characters_outside_the_allowed_set(sqs, queue):
    with pytest.raises(sqs.exceptions.InvalidMessageContents) as info:
        sqs.send_message(QueueUrl=queue, MessageBody="bell\x07")
    assert "#x7" in info.value.response["Error"]["Message"]
    assert sqs.send_message(QueueUrl=queue, MessageBody="tab\tnew\nline\r😀\ue000")["MessageId"]


def test_messages_up_to_the_maximum_size_are_accepted_and_larger_ones_rejected(sqs):
    url = sqs.create_queue(QueueName="small", Attributes={"MaximumMessageSize": "1024"})["QueueUrl"]
    sqs.send_message(QueueUrl=url, MessageBody="x" * 1024)
    err = error_of(sqs.send_message, QueueUrl=url, MessageBody="x" * 1025)
    assert (err["Error"]["Code"], err["Error"]["Message"]) == (
        "InvalidParameterValue", "One or more parameters are invalid. Reason: Message must be shorter than 1024 bytes.")
    attrs = {"k": {"DataType": "String", "StringValue": "v" * 10}}
    err = error_of(sqs.send_message, QueueUrl=url, MessageBody="x" * 1010, MessageAttributes=attrs)
    assert err["Error"]["Code"] == "InvalidParameterValue"


def test_default_limit_is_one_mebibyte(sqs, queue):
    sqs.send_message(QueueUrl=queue, MessageBody="x" * 1_048_576)
    err = error_of(sqs.send_message, QueueUrl=queue, MessageBody="x" * 1_048_577)
    assert err["Error"]["Message"].endswith("Message must be shorter than 1048576 bytes.")


@pytest.mark.parametrize("attrs,fragment", [
    ({"n": {"DataType": "Number", "StringValue": "12abc"}}, "to a number"),
    ({"n": {"DataType": "Integer", "StringValue": "1"}}, "supported type prefixes"),
    ({"n": {"DataType": "String"}}, "non-empty message attribute value"),
    ({"n": {"DataType": "Binary", "StringValue": "x"}}, "non-empty message attribute value"),
    ({"AWS.reserved": {"DataType": "String", "StringValue": "x"}}, "is invalid"),
    ({"bad..name": {"DataType": "String", "StringValue": "x"}}, "is invalid"),
    ({f"a{i}": {"DataType": "String", "StringValue": "x"} for i in range(11)}, "exceeds the allowed maximum [10]"),
])
def test_invalid_message_attributes_are_rejected(sqs, queue, attrs, fragment):
    err = error_of(sqs.send_message, QueueUrl=queue, MessageBody="x", MessageAttributes=attrs)
    assert err["Error"]["Code"] == "InvalidParameterValue"
    assert fragment in err["Error"]["Message"]


def test_send_message_rejects_delay_out_of_range(sqs, queue):
    err = error_of(sqs.send_message, QueueUrl=queue, MessageBody="x", DelaySeconds=901)
    assert err["Error"]["Code"] == "InvalidParameterValue"
    assert err["Error"]["Message"].startswith("Value 901 for parameter DelaySeconds is invalid.")


def test_delayed_message_is_invisible_until_its_delay_passes(sqs, queue):
    sqs.send_message(QueueUrl=queue, MessageBody="later", DelaySeconds=1)
    attrs = sqs.get_queue_attributes(QueueUrl=queue, AttributeNames=["All"])["Attributes"]
    assert attrs["ApproximateNumberOfMessagesDelayed"] == "1"
    assert attrs["ApproximateNumberOfMessages"] == "0"
    assert "Messages" not in sqs.receive_message(QueueUrl=queue)
    started = time.monotonic()
    got = sqs.receive_message(QueueUrl=queue, WaitTimeSeconds=5)["Messages"]
    assert got[0]["Body"] == "later"
    assert time.monotonic() - started < 2.5


def test_queue_delay_applies_to_every_message(sqs):
    url = sqs.create_queue(QueueName="slow", Attributes={"DelaySeconds": "1"})["QueueUrl"]
    sqs.send_message(QueueUrl=url, MessageBody="x")
    assert "Messages" not in sqs.receive_message(QueueUrl=url)
    time.sleep(1.2)
    assert sqs.receive_message(QueueUrl=url)["Messages"][0]["Body"] == "x"


def test_receive_rejects_parameters_out_of_range(sqs, queue):
    for kwargs in ({"MaxNumberOfMessages": 11}, {"MaxNumberOfMessages": 0}, {"WaitTimeSeconds": 21},
                   {"VisibilityTimeout": 43201}):
        err = error_of(sqs.receive_message, QueueUrl=queue, **kwargs)
        assert err["Error"]["Code"] == "InvalidParameterValue", kwargs
        name, value = next(iter(kwargs.items()))
        assert err["Error"]["Message"].startswith(f"Value {value} for parameter {name} is invalid.")


def test_receive_returns_up_to_max_number_of_messages(sqs, queue):
    for i in range(15):
        sqs.send_message(QueueUrl=queue, MessageBody=str(i))
    assert len(sqs.receive_message(QueueUrl=queue)["Messages"]) == 1
    assert len(sqs.receive_message(QueueUrl=queue, MaxNumberOfMessages=10)["Messages"]) == 10
    assert len(sqs.receive_message(QueueUrl=queue, MaxNumberOfMessages=10)["Messages"]) == 4
    assert "Messages" not in sqs.receive_message(QueueUrl=queue, MaxNumberOfMessages=10)


def test_received_message_reappears_after_its_visibility_timeout(sqs, queue):
    sqs.send_message(QueueUrl=queue, MessageBody="retry me")
    first = sqs.receive_message(QueueUrl=queue, VisibilityTimeout=1)["Messages"][0]
    attrs = sqs.get_queue_attributes(QueueUrl=queue, AttributeNames=["All"])["Attributes"]
    assert attrs["ApproximateNumberOfMessagesNotVisible"] == "1"
    assert attrs["ApproximateNumberOfMessages"] == "0"
    assert "Messages" not in sqs.receive_message(QueueUrl=queue)
    time.sleep(1.2)
    second = sqs.receive_message(QueueUrl=queue, AttributeNames=["ApproximateReceiveCount"])["Messages"][0]
    assert second["MessageId"] == first["MessageId"]
    assert second["ReceiptHandle"] != first["ReceiptHandle"]
    assert second["Attributes"]["ApproximateReceiveCount"] == "2"


def test_queue_visibility_timeout_is_the_default(sqs):
    url = sqs.create_queue(QueueName="quick", Attributes={"VisibilityTimeout": "1"})["QueueUrl"]
    sqs.send_message(QueueUrl=url, MessageBody="x")
    sqs.receive_message(QueueUrl=url)
    assert "Messages" not in sqs.receive_message(QueueUrl=url)
    assert sqs.receive_message(QueueUrl=url, WaitTimeSeconds=3)["Messages"][0]["Body"] == "x"


def test_long_poll_returns_as_soon_as_a_message_is_sent(sqs, queue, client):
    sender = client("sqs")

    def send_later():
        time.sleep(0.5)
        sender.send_message(QueueUrl=queue, MessageBody="wake up")

    thread = threading.Thread(target=send_later)
    started = time.monotonic()
    thread.start()
    got = sqs.receive_message(QueueUrl=queue, WaitTimeSeconds=10)
    elapsed = time.monotonic() - started
    thread.join()
    assert got["Messages"][0]["Body"] == "wake up"
    assert 0.4 <= elapsed < 2.0


def test_long_poll_with_nothing_to_receive_waits_the_full_time(sqs, queue):
    started = time.monotonic()
    assert "Messages" not in sqs.receive_message(QueueUrl=queue, WaitTimeSeconds=1)
    assert time.monotonic() - started >= 0.95


def test_queue_receive_wait_time_is_the_default_wait(sqs):
    url = sqs.create_queue(QueueName="patient", Attributes={"ReceiveMessageWaitTimeSeconds": "1"})["QueueUrl"]
    started = time.monotonic()
    sqs.receive_message(QueueUrl=url)
    assert time.monotonic() - started >= 0.95
    started = time.monotonic()
    sqs.receive_message(QueueUrl=url, WaitTimeSeconds=0)
    assert time.monotonic() - started < 0.5


def test_many_concurrent_long_polls_each_get_a_distinct_message(sqs, queue, client):
    results, threads = [], []

    def poll():
        results.append(client("sqs").receive_message(QueueUrl=queue, WaitTimeSeconds=5).get("Messages", []))

    for _ in range(4):
        threads.append(threading.Thread(target=poll))
        threads[-1].start()
    time.sleep(0.3)
    for i in range(4):
        sqs.send_message(QueueUrl=queue, MessageBody=str(i))
    for t in threads:
        t.join()
    bodies = sorted(m["Body"] for r in results for m in r)
    assert bodies == ["0", "1", "2", "3"]


def long_poll_in_background(client, url, **kwargs):
    """Starts a ReceiveMessage (WaitTimeSeconds=20) on its own thread and gives it time to
    start waiting; returns a function that joins it: (response, seconds it took)."""
    result = {}

    def poll():
        started = time.monotonic()
        result["response"] = client("sqs").receive_message(QueueUrl=url, WaitTimeSeconds=20, **kwargs)
        result["elapsed"] = time.monotonic() - started

    thread = threading.Thread(target=poll)
    thread.start()
    time.sleep(0.5)

    def join():
        thread.join()
        return result["response"], result["elapsed"]

    return join


def test_long_poll_returns_when_the_clock_passes_a_delayed_message(sqs, queue, client, server):
    sqs.send_message(QueueUrl=queue, MessageBody="in ten minutes", DelaySeconds=600)
    join = long_poll_in_background(client, queue)
    server.advance_clock(601)
    got, elapsed = join()
    assert got["Messages"][0]["Body"] == "in ten minutes"
    assert elapsed < 10, "woke when the clock passed the delay, not at the end of its wait"


def test_long_poll_returns_when_the_clock_passes_an_in_flight_message(sqs, queue, client, server):
    sqs.send_message(QueueUrl=queue, MessageBody="retry later")
    first = sqs.receive_message(QueueUrl=queue, VisibilityTimeout=300)["Messages"][0]
    join = long_poll_in_background(client, queue, AttributeNames=["ApproximateReceiveCount"])
    server.advance_clock(120)
    server.advance_clock(181)
    got, elapsed = join()
    assert got["Messages"][0]["MessageId"] == first["MessageId"]
    assert got["Messages"][0]["Attributes"]["ApproximateReceiveCount"] == "2"
    assert elapsed < 10


def test_long_poll_wakes_when_a_visibility_timeout_is_shortened(sqs, queue, client):
    sqs.send_message(QueueUrl=queue, MessageBody="sooner")
    first = sqs.receive_message(QueueUrl=queue, VisibilityTimeout=600)["Messages"][0]
    join = long_poll_in_background(client, queue)
    sqs.change_message_visibility(QueueUrl=queue, ReceiptHandle=first["ReceiptHandle"], VisibilityTimeout=1)
    got, elapsed = join()
    assert got["Messages"][0]["Body"] == "sooner"
    assert elapsed < 10


def test_advancing_the_clock_short_of_a_delay_leaves_the_message_hidden(sqs, queue, server):
    sqs.send_message(QueueUrl=queue, MessageBody="not yet", DelaySeconds=600)
    server.advance_clock(300)
    assert "Messages" not in sqs.receive_message(QueueUrl=queue, WaitTimeSeconds=1)
    server.advance_clock(301)
    assert sqs.receive_message(QueueUrl=queue)["Messages"][0]["Body"] == "not yet"


def test_visibility_and_retention_follow_the_server_clock(sqs, server):
    url = sqs.create_queue(QueueName="timed", Attributes={"MessageRetentionPeriod": "60"})["QueueUrl"]
    sent = sqs.send_message(QueueUrl=url, MessageBody="first")
    got = sqs.receive_message(QueueUrl=url, VisibilityTimeout=30)["Messages"]
    assert got[0]["MessageId"] == sent["MessageId"]
    assert "Messages" not in sqs.receive_message(QueueUrl=url)
    server.advance_clock(31)
    again = sqs.receive_message(QueueUrl=url, VisibilityTimeout=30, AttributeNames=["ApproximateReceiveCount"])
    assert again["Messages"][0]["MessageId"] == sent["MessageId"]
    assert again["Messages"][0]["Attributes"]["ApproximateReceiveCount"] == "2"
    server.advance_clock(30)
    assert "Messages" not in sqs.receive_message(QueueUrl=url), "the 60 s retention has expired it"
    attrs = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["All"])["Attributes"]
    assert attrs["ApproximateNumberOfMessages"] == attrs["ApproximateNumberOfMessagesNotVisible"] == "0"


# --- delete ---------------------------------------------------------------------------


def test_delete_message_removes_it_for_good(sqs, queue):
    sqs.send_message(QueueUrl=queue, MessageBody="x")
    handle = sqs.receive_message(QueueUrl=queue, VisibilityTimeout=0)["Messages"][0]["ReceiptHandle"]
    sqs.delete_message(QueueUrl=queue, ReceiptHandle=handle)
    assert "Messages" not in sqs.receive_message(QueueUrl=queue)
    attrs = sqs.get_queue_attributes(QueueUrl=queue, AttributeNames=["All"])["Attributes"]
    assert attrs["ApproximateNumberOfMessages"] == attrs["ApproximateNumberOfMessagesNotVisible"] == "0"
    sqs.delete_message(QueueUrl=queue, ReceiptHandle=handle)


def test_a_stale_receipt_handle_still_deletes_the_message(sqs, queue):
    sqs.send_message(QueueUrl=queue, MessageBody="x")
    old = sqs.receive_message(QueueUrl=queue, VisibilityTimeout=0)["Messages"][0]["ReceiptHandle"]
    new = sqs.receive_message(QueueUrl=queue, VisibilityTimeout=0)["Messages"][0]["ReceiptHandle"]
    assert old != new
    sqs.delete_message(QueueUrl=queue, ReceiptHandle=old)
    assert "Messages" not in sqs.receive_message(QueueUrl=queue)


def test_garbage_receipt_handle_is_invalid(sqs, queue):
    with pytest.raises(sqs.exceptions.ReceiptHandleIsInvalid) as info:
        sqs.delete_message(QueueUrl=queue, ReceiptHandle="not-a-handle")
    err = info.value.response["Error"]
    assert err["Code"] == "ReceiptHandleIsInvalid"
    assert err["Message"] == 'The input receipt handle "not-a-handle" is not a valid receipt handle.'


def test_operations_on_a_missing_queue_are_queue_does_not_exist(sqs, server):
    url = f"{server.endpoint}/000000000000/ghost"
    for call, kwargs in ((sqs.send_message, {"MessageBody": "x"}), (sqs.receive_message, {}),
                         (sqs.delete_message, {"ReceiptHandle": "x"}), (sqs.get_queue_attributes, {}),
                         (sqs.delete_queue, {})):
        with pytest.raises(sqs.exceptions.QueueDoesNotExist):
            call(QueueUrl=url, **kwargs)


# --- FIFO -----------------------------------------------------------------------------


def test_fifo_queue_has_fifo_attributes(sqs, fifo):
    attrs = sqs.get_queue_attributes(QueueUrl=fifo, AttributeNames=["All"])["Attributes"]
    assert attrs["FifoQueue"] == "true"
    assert attrs["ContentBasedDeduplication"] == "false"
    assert attrs["DeduplicationScope"] == "queue"
    assert attrs["FifoThroughputLimit"] == "perQueue"


def test_fifo_send_requires_a_group_and_a_deduplication_id(sqs, fifo):
    err = error_of(sqs.send_message, QueueUrl=fifo, MessageBody="x", MessageDeduplicationId="d")
    assert (err["Error"]["Code"], err["Error"]["Message"]) == (
        "MissingParameter", "The request must contain the parameter MessageGroupId.")
    err = error_of(sqs.send_message, QueueUrl=fifo, MessageBody="x", MessageGroupId="g")
    assert err["Error"]["Code"] == "InvalidParameterValue"
    assert err["Error"]["Message"] == (
        "The queue should either have ContentBasedDeduplication enabled or MessageDeduplicationId provided explicitly")
    err = error_of(sqs.send_message, QueueUrl=fifo, MessageBody="x", MessageGroupId="g",
                   MessageDeduplicationId="d", DelaySeconds=1)
    assert err["Error"]["Code"] == "InvalidParameterValue"


def test_standard_queue_rejects_deduplication_ids(sqs, queue):
    err = error_of(sqs.send_message, QueueUrl=queue, MessageBody="x", MessageDeduplicationId="d")
    assert err["Error"]["Code"] == "InvalidParameterValue"


def test_fifo_deduplicates_within_the_window(sqs, fifo):
    first = sqs.send_message(QueueUrl=fifo, MessageBody="a", MessageGroupId="g", MessageDeduplicationId="d1")
    again = sqs.send_message(QueueUrl=fifo, MessageBody="a", MessageGroupId="g", MessageDeduplicationId="d1")
    other = sqs.send_message(QueueUrl=fifo, MessageBody="a", MessageGroupId="g", MessageDeduplicationId="d2")
    assert first["MessageId"] == again["MessageId"] != other["MessageId"]
    assert first["SequenceNumber"] == again["SequenceNumber"]
    assert int(other["SequenceNumber"]) > int(first["SequenceNumber"])
    assert len(first["SequenceNumber"]) == 20
    got = sqs.receive_message(QueueUrl=fifo, MaxNumberOfMessages=10, AttributeNames=["All"])["Messages"]
    assert [m["MessageId"] for m in got] == [first["MessageId"], other["MessageId"]]
    attrs = got[0]["Attributes"]
    assert attrs["MessageGroupId"] == "g"
    assert attrs["MessageDeduplicationId"] == "d1"
    assert attrs["SequenceNumber"] == first["SequenceNumber"]


def test_content_based_deduplication_uses_the_body(sqs):
    url = sqs.create_queue(QueueName="cbd.fifo", Attributes={
        "FifoQueue": "true", "ContentBasedDeduplication": "true"})["QueueUrl"]
    a = sqs.send_message(QueueUrl=url, MessageBody="same", MessageGroupId="g")
    b = sqs.send_message(QueueUrl=url, MessageBody="same", MessageGroupId="g")
    c = sqs.send_message(QueueUrl=url, MessageBody="different", MessageGroupId="g")
    assert a["MessageId"] == b["MessageId"] != c["MessageId"]
    got = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10, AttributeNames=["MessageDeduplicationId"])
    assert got["Messages"][0]["Attributes"]["MessageDeduplicationId"] == hashlib.sha256(b"same").hexdigest()


def test_fifo_holds_back_a_group_while_a_message_is_in_flight(sqs, fifo):
    for i, group in enumerate(["a", "a", "b"]):
        sqs.send_message(QueueUrl=fifo, MessageBody=f"{group}{i}", MessageGroupId=group, MessageDeduplicationId=str(i))
    first = sqs.receive_message(QueueUrl=fifo, VisibilityTimeout=30)["Messages"]
    assert [m["Body"] for m in first] == ["a0"]
    second = sqs.receive_message(QueueUrl=fifo, MaxNumberOfMessages=10)["Messages"]
    assert [m["Body"] for m in second] == ["b2"]
    assert "Messages" not in sqs.receive_message(QueueUrl=fifo, MaxNumberOfMessages=10)
    sqs.delete_message(QueueUrl=fifo, ReceiptHandle=first[0]["ReceiptHandle"])
    third = sqs.receive_message(QueueUrl=fifo, MaxNumberOfMessages=10)["Messages"]
    assert [m["Body"] for m in third] == ["a1"]


def test_fifo_redelivers_in_order_after_visibility_expires(sqs, fifo):
    for i in range(3):
        sqs.send_message(QueueUrl=fifo, MessageBody=str(i), MessageGroupId="g", MessageDeduplicationId=str(i))
    got = sqs.receive_message(QueueUrl=fifo, MaxNumberOfMessages=2, VisibilityTimeout=1)["Messages"]
    assert [m["Body"] for m in got] == ["0", "1"]
    assert "Messages" not in sqs.receive_message(QueueUrl=fifo)
    again = sqs.receive_message(QueueUrl=fifo, MaxNumberOfMessages=10, WaitTimeSeconds=3)["Messages"]
    assert [m["Body"] for m in again] == ["0", "1", "2"]


def test_fifo_keeps_groups_in_order_and_exactly_once_under_concurrent_producers(sqs, fifo, client):
    def send(c, group, dedup, body):
        return c.send_message(QueueUrl=fifo, MessageBody=body, MessageGroupId=group, MessageDeduplicationId=dedup)

    responses = twin_producers(lambda: client("sqs"), send)
    received = consume_fifo(client, fifo, len(responses))
    assert len(received) == len(responses) == 90
    assert_fifo_delivery(received, responses)
    for m in received:
        sent = responses[m["Attributes"]["MessageDeduplicationId"]][0]
        assert (m["MessageId"], m["Attributes"]["SequenceNumber"]) == (sent["MessageId"], sent["SequenceNumber"])
    assert "Messages" not in sqs.receive_message(QueueUrl=fifo, MaxNumberOfMessages=10)


# --- AWS CLI --------------------------------------------------------------------------


def test_cli_creates_sends_receives_and_deletes(aws, server):
    # The CLI's sqs customization points us-east-1 at queue.amazonaws.com unless
    # --endpoint-url is given, whatever AWS_ENDPOINT_URL says.
    def sqs_cli(*args, check=True):
        return aws("sqs", *args, "--endpoint-url", server.endpoint, check=check)

    url = json.loads(sqs_cli("create-queue", "--queue-name", "cli").stdout)["QueueUrl"]
    assert url == f"{server.endpoint}/000000000000/cli"
    sent = json.loads(sqs_cli("send-message", "--queue-url", url, "--message-body", "from cli",
                          "--message-attributes", '{"k":{"DataType":"String","StringValue":"v"}}').stdout)
    assert sent["MD5OfMessageBody"] == md5("from cli")
    assert sent["MD5OfMessageAttributes"] == md5_of_attributes({"k": {"DataType": "String", "StringValue": "v"}})
    got = json.loads(sqs_cli("receive-message", "--queue-url", url, "--message-attribute-names", "All").stdout)
    message = got["Messages"][0]
    assert message["Body"] == "from cli"
    sqs_cli("delete-message", "--queue-url", url, "--receipt-handle", message["ReceiptHandle"])
    assert json.loads(sqs_cli("list-queues").stdout)["QueueUrls"] == [url]
    failed = sqs_cli("get-queue-url", "--queue-name", "ghost", check=False)
    assert failed.returncode != 0
    assert "AWS.SimpleQueueService.NonExistentQueue" in failed.stderr
    sqs_cli("delete-queue", "--queue-url", url)
    assert "QueueUrls" not in json.loads(sqs_cli("list-queues").stdout or "{}")


# --- persistence ----------------------------------------------------------------------


def test_messages_and_their_visibility_survive_a_restart(tmp_path):
    import boto3
    from botocore.config import Config
    from roto_server import RotoServer

    def sqs_of(server):
        return boto3.client("sqs", endpoint_url=server.endpoint, aws_access_key_id="test",
                            aws_secret_access_key="test", region_name="us-east-1",
                            config=Config(retries={"max_attempts": 1}))

    with RotoServer("--data-dir", str(tmp_path)) as first:
        sqs = sqs_of(first)
        url = sqs.create_queue(QueueName="kept")["QueueUrl"]
        sqs.send_message(QueueUrl=url, MessageBody="visible")
        sqs.send_message(QueueUrl=url, MessageBody="hidden")
        hidden = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10, VisibilityTimeout=600)["Messages"]
        assert sorted(m["Body"] for m in hidden) == ["hidden", "visible"]
        for m in hidden:
            if m["Body"] == "visible":
                sqs.delete_message(QueueUrl=url, ReceiptHandle=m["ReceiptHandle"])
        sqs.send_message(QueueUrl=url, MessageBody="fresh")
    with RotoServer("--data-dir", str(tmp_path)) as second:
        sqs = sqs_of(second)
        url = sqs.get_queue_url(QueueName="kept")["QueueUrl"]
        attrs = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["All"])["Attributes"]
        assert attrs["ApproximateNumberOfMessages"] == "1"
        assert attrs["ApproximateNumberOfMessagesNotVisible"] == "1"
        got = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10)["Messages"]
        assert [m["Body"] for m in got] == ["fresh"]
