"""SNS over the query protocol through boto3: topics, subscriptions, filter policies, and
deliveries to SQS, HTTP endpoints, email and SMS (recorded in the trace)."""

from __future__ import annotations

import hashlib
import http.server
import json
import struct
import threading
import time
import urllib.parse
import urllib.request

import pytest
from botocore.exceptions import ClientError

from fifo_helpers import assert_fifo_delivery, consume_fifo, twin_producers


def error_of(call, *args, **kwargs) -> dict:
    with pytest.raises(ClientError) as info:
        call(*args, **kwargs)
    return info.value.response


def code_and_message(call, *args, **kwargs) -> tuple[str, str]:
    err = error_of(call, *args, **kwargs)["Error"]
    return err["Code"], err["Message"]


@pytest.fixture
def sns(client):
    return client("sns")


@pytest.fixture
def sqs(client):
    return client("sqs")


@pytest.fixture
def topic(sns):
    return sns.create_topic(Name="events")["TopicArn"]


def queue_subscribed(sns, sqs, topic, name="inbox", **attributes):
    fifo = name.endswith(".fifo")
    url = sqs.create_queue(QueueName=name, Attributes={"FifoQueue": "true"} if fifo else {})["QueueUrl"]
    arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    sub = sns.subscribe(TopicArn=topic, Protocol="sqs", Endpoint=arn, Attributes=attributes,
                        ReturnSubscriptionArn=True)["SubscriptionArn"]
    return url, sub


def receive_all(sqs, url, expected: int, wait: float = 3.0) -> list:
    got, deadline = [], time.monotonic() + wait
    while len(got) < expected and time.monotonic() < deadline:
        got += sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10, WaitTimeSeconds=1,
                                   MessageAttributeNames=["All"], AttributeNames=["All"]).get("Messages", [])
    return got


def nothing_arrives(sqs, url) -> bool:
    return "Messages" not in sqs.receive_message(QueueUrl=url, WaitTimeSeconds=1)


# --- topics ---------------------------------------------------------------------------


def test_create_topic_is_idempotent_and_listed(sns):
    arn = sns.create_topic(Name="orders")["TopicArn"]
    assert arn == "arn:aws:sns:us-east-1:000000000000:orders"
    assert sns.create_topic(Name="orders")["TopicArn"] == arn
    assert [t["TopicArn"] for t in sns.list_topics()["Topics"]] == [arn]
    code, message = code_and_message(sns.create_topic, Name="orders", Attributes={"DisplayName": "other"})
    assert code == "InvalidParameter"
    assert "Topic already exists with different attributes" in message


@pytest.mark.parametrize("name", ["has space", "a" * 257, "dot.name", ""])
def test_invalid_topic_names_are_invalid_parameter(sns, name):
    err = error_of(sns.create_topic, Name=name)
    assert err["Error"]["Code"] == "InvalidParameter"
    assert err["ResponseMetadata"]["HTTPStatusCode"] == 400


def test_fifo_topics_need_the_suffix_and_the_attribute(sns):
    arn = sns.create_topic(Name="t.fifo", Attributes={"FifoTopic": "true"})["TopicArn"]
    attrs = sns.get_topic_attributes(TopicArn=arn)["Attributes"]
    assert attrs["FifoTopic"] == "true" and attrs["ContentBasedDeduplication"] == "false"
    for name, attributes in (("t2.fifo", {}), ("t3", {"FifoTopic": "true"})):
        assert error_of(sns.create_topic, Name=name, Attributes=attributes)["Error"]["Code"] == "InvalidParameter"


def test_topic_attributes_have_aws_defaults_and_can_be_set(sns, topic):
    attrs = sns.get_topic_attributes(TopicArn=topic)["Attributes"]
    assert attrs["TopicArn"] == topic and attrs["Owner"] == "000000000000"
    assert attrs["SubscriptionsConfirmed"] == attrs["SubscriptionsPending"] == "0"
    assert json.loads(attrs["Policy"])["Statement"][0]["Resource"] == topic
    assert "http" in json.loads(attrs["EffectiveDeliveryPolicy"])
    sns.set_topic_attributes(TopicArn=topic, AttributeName="DisplayName", AttributeValue="Events")
    assert sns.get_topic_attributes(TopicArn=topic)["Attributes"]["DisplayName"] == "Events"
    code, _ = code_and_message(sns.set_topic_attributes, TopicArn=topic, AttributeName="Colour", AttributeValue="x")
    assert code == "InvalidParameter"


def test_missing_topics_are_not_found(sns):
    ghost = "arn:aws:sns:us-east-1:000000000000:ghost"
    err = error_of(sns.get_topic_attributes, TopicArn=ghost)
    assert (err["Error"]["Code"], err["Error"]["Message"]) == ("NotFound", "Topic does not exist")
    assert err["ResponseMetadata"]["HTTPStatusCode"] == 404
    assert error_of(sns.publish, TopicArn=ghost, Message="x")["Error"]["Code"] == "NotFound"
    assert error_of(sns.subscribe, TopicArn=ghost, Protocol="sqs",
                    Endpoint="arn:aws:sqs:us-east-1:000000000000:q")["Error"]["Code"] == "NotFound"
    sns.delete_topic(TopicArn=ghost)


def test_delete_topic_removes_it_and_its_subscriptions(sns, sqs, topic):
    queue_subscribed(sns, sqs, topic)
    sns.delete_topic(TopicArn=topic)
    assert sns.list_topics()["Topics"] == []
    assert sns.list_subscriptions()["Subscriptions"] == []


def test_topic_tags(sns):
    arn = sns.create_topic(Name="tagged", Tags=[{"Key": "team", "Value": "a"}])["TopicArn"]
    sns.tag_resource(ResourceArn=arn, Tags=[{"Key": "env", "Value": "dev"}])
    tags = {t["Key"]: t["Value"] for t in sns.list_tags_for_resource(ResourceArn=arn)["Tags"]}
    assert tags == {"team": "a", "env": "dev"}
    sns.untag_resource(ResourceArn=arn, TagKeys=["team"])
    assert sns.list_tags_for_resource(ResourceArn=arn)["Tags"] == [{"Key": "env", "Value": "dev"}]
    err = error_of(sns.list_tags_for_resource, ResourceArn="arn:aws:sns:us-east-1:000000000000:ghost")
    assert err["Error"]["Code"] == "ResourceNotFound"
    err = error_of(sns.tag_resource, ResourceArn=arn, Tags=[{"Key": f"k{i}", "Value": "v"} for i in range(50)])
    assert err["Error"]["Code"] == "TagLimitExceeded"


def test_topic_permissions_edit_the_policy(sns, topic):
    sns.add_permission(TopicArn=topic, Label="pub", AWSAccountId=["111122223333"], ActionName=["Publish"])
    policy = json.loads(sns.get_topic_attributes(TopicArn=topic)["Attributes"]["Policy"])
    assert [s["Sid"] for s in policy["Statement"]] == ["__default_statement_ID", "pub"]
    assert error_of(sns.add_permission, TopicArn=topic, Label="pub", AWSAccountId=["1"],
                    ActionName=["Publish"])["Error"]["Code"] == "InvalidParameter"
    sns.remove_permission(TopicArn=topic, Label="pub")
    policy = json.loads(sns.get_topic_attributes(TopicArn=topic)["Attributes"]["Policy"])
    assert [s["Sid"] for s in policy["Statement"]] == ["__default_statement_ID"]


# --- subscriptions --------------------------------------------------------------------


def test_sqs_subscriptions_are_confirmed_and_listed(sns, sqs, topic):
    url, sub = queue_subscribed(sns, sqs, topic)
    assert sub.startswith(topic + ":")
    listed = sns.list_subscriptions_by_topic(TopicArn=topic)["Subscriptions"]
    assert listed == [{"SubscriptionArn": sub, "Owner": "000000000000", "Protocol": "sqs",
                       "Endpoint": "arn:aws:sqs:us-east-1:000000000000:inbox", "TopicArn": topic}]
    assert sns.list_subscriptions()["Subscriptions"] == listed
    attrs = sns.get_subscription_attributes(SubscriptionArn=sub)["Attributes"]
    assert attrs["PendingConfirmation"] == "false" and attrs["RawMessageDelivery"] == "false"
    assert sns.get_topic_attributes(TopicArn=topic)["Attributes"]["SubscriptionsConfirmed"] == "1"
    again = sns.subscribe(TopicArn=topic, Protocol="sqs", Endpoint="arn:aws:sqs:us-east-1:000000000000:inbox")
    assert again["SubscriptionArn"] == sub
    sns.unsubscribe(SubscriptionArn=sub)
    assert sns.list_subscriptions()["Subscriptions"] == []
    err = error_of(sns.unsubscribe, SubscriptionArn=sub)
    assert err["Error"]["Code"] == "NotFound"


@pytest.mark.parametrize("protocol,endpoint", [
    ("carrier-pigeon", "x"), ("sqs", "not-an-arn"), ("http", "ftp://x"), ("email", "nobody"),
])
def test_subscribe_checks_protocol_and_endpoint(sns, topic, protocol, endpoint):
    assert error_of(sns.subscribe, TopicArn=topic, Protocol=protocol,
                    Endpoint=endpoint)["Error"]["Code"] == "InvalidParameter"


def test_subscription_attributes_are_validated(sns, sqs, topic):
    _, sub = queue_subscribed(sns, sqs, topic)
    sns.set_subscription_attributes(SubscriptionArn=sub, AttributeName="RawMessageDelivery", AttributeValue="true")
    assert sns.get_subscription_attributes(SubscriptionArn=sub)["Attributes"]["RawMessageDelivery"] == "true"
    for name, value in (("RawMessageDelivery", "yes"), ("FilterPolicyScope", "Everything"), ("Colour", "red"),
                        ("FilterPolicy", "{not json")):
        code, _ = code_and_message(sns.set_subscription_attributes, SubscriptionArn=sub,
                                   AttributeName=name, AttributeValue=value)
        assert code == "InvalidParameter", name
    sns.set_subscription_attributes(SubscriptionArn=sub, AttributeName="FilterPolicy",
                                    AttributeValue='{"k": ["v"]}')
    attrs = sns.get_subscription_attributes(SubscriptionArn=sub)["Attributes"]
    assert (attrs["FilterPolicy"], attrs["FilterPolicyScope"]) == ('{"k": ["v"]}', "MessageAttributes")


@pytest.mark.parametrize("policy,message", [
    ({"k": [{"foo": 1}]}, "Invalid parameter: FilterPolicy: Unrecognized match type foo"),
    ({"k": [{"exists": "yes"}]}, "Invalid parameter: FilterPolicy: exists match pattern must be either true or false."),
    ({"k": "v"}, 'Invalid parameter: FilterPolicy: "k" must be an object or an array'),
    ({"a": {"b": ["x"]}}, "Invalid parameter: Filter policy scope MessageAttributes does not support nested filter policy"),
    ({k: ["v"] for k in "abcdef"}, "Invalid parameter: FilterPolicy: Filter policy can not have more than 5 keys"),
])
def test_bad_filter_policies_get_aws_messages(sns, topic, policy, message):
    code, text = code_and_message(sns.subscribe, TopicArn=topic, Protocol="sqs",
                                  Endpoint="arn:aws:sqs:us-east-1:000000000000:q",
                                  Attributes={"FilterPolicy": json.dumps(policy)})
    assert (code, text) == ("InvalidParameter", message)


def test_numeric_filter_errors_carry_the_source_position(sns, topic):
    code, text = code_and_message(sns.subscribe, TopicArn=topic, Protocol="sqs",
                                  Endpoint="arn:aws:sqs:us-east-1:000000000000:q",
                                  Attributes={"FilterPolicy": '{"price": [{"numeric": ["<", "100"]}]}'})
    assert code == "InvalidParameter"
    assert text.startswith("Invalid parameter: Attributes Reason: FilterPolicy: Value of < must be numeric\n at [Source:")


# --- publish to SQS -------------------------------------------------------------------


def test_publish_delivers_the_aws_envelope_to_sqs(sns, sqs, topic, server):
    url, sub = queue_subscribed(sns, sqs, topic)
    attrs = {"colour": {"DataType": "String", "StringValue": "blue"},
             "n": {"DataType": "Number", "StringValue": "7"},
             "raw": {"DataType": "Binary", "BinaryValue": b"\x00\x01"}}
    sent = sns.publish(TopicArn=topic, Message="hello", Subject="greeting", MessageAttributes=attrs)
    got = receive_all(sqs, url, 1)
    assert len(got) == 1
    envelope = json.loads(got[0]["Body"])
    assert envelope["Type"] == "Notification"
    assert envelope["MessageId"] == sent["MessageId"]
    assert (envelope["TopicArn"], envelope["Subject"], envelope["Message"]) == (topic, "greeting", "hello")
    assert envelope["SignatureVersion"] == "1" and envelope["Signature"]
    assert envelope["SigningCertURL"].startswith("https://sns.us-east-1.amazonaws.com/")
    assert sub in urllib.parse.unquote(envelope["UnsubscribeURL"])
    assert time.strptime(envelope["Timestamp"], "%Y-%m-%dT%H:%M:%S.%fZ")
    assert envelope["MessageAttributes"] == {"colour": {"Type": "String", "Value": "blue"},
                                             "n": {"Type": "Number", "Value": "7"},
                                             "raw": {"Type": "Binary", "Value": "AAE="}}
    assert "MessageAttributes" not in got[0]
    assert got[0]["Attributes"]["SenderId"]


def test_unsubscribe_url_unsubscribes(sns, sqs, topic):
    url, sub = queue_subscribed(sns, sqs, topic)
    sns.publish(TopicArn=topic, Message="x")
    envelope = json.loads(receive_all(sqs, url, 1)[0]["Body"])
    with urllib.request.urlopen(envelope["UnsubscribeURL"], timeout=5) as resp:
        assert resp.status == 200
    assert sns.list_subscriptions()["Subscriptions"] == []


def md5_of_attributes(attributes: dict) -> str:
    buf = b""
    for name in sorted(attributes):
        attr = attributes[name]
        for part in (name.encode(), attr["DataType"].encode()):
            buf += struct.pack(">I", len(part)) + part
        value = attr["StringValue"].encode()
        buf += b"\x01" + struct.pack(">I", len(value)) + value
    return hashlib.md5(buf).hexdigest()


def test_raw_delivery_sends_the_bare_message_with_sqs_attributes(sns, sqs, topic):
    url, _ = queue_subscribed(sns, sqs, topic, RawMessageDelivery="true")
    attrs = {"colour": {"DataType": "String", "StringValue": "blue"},
             "tags": {"DataType": "String.Array", "StringValue": '["a","b"]'}}
    sns.publish(TopicArn=topic, Message="bare", MessageAttributes=attrs)
    got = receive_all(sqs, url, 1)[0]
    assert got["Body"] == "bare"
    expected = {"colour": {"DataType": "String", "StringValue": "blue"},
                "tags": {"DataType": "String", "StringValue": '["a","b"]'}}
    assert got["MessageAttributes"] == expected
    assert got["MD5OfMessageAttributes"] == md5_of_attributes(expected)


def test_message_structure_json_sends_each_protocol_its_entry(sns, sqs, topic):
    url, _ = queue_subscribed(sns, sqs, topic)
    sns.publish(TopicArn=topic, MessageStructure="json",
                Message=json.dumps({"default": "for everyone", "sqs": "for queues"}))
    assert json.loads(receive_all(sqs, url, 1)[0]["Body"])["Message"] == "for queues"
    code, message = code_and_message(sns.publish, TopicArn=topic, MessageStructure="json",
                                     Message=json.dumps({"sqs": "x"}))
    assert (code, message) == ("InvalidParameter",
                               "Invalid parameter: Message Structure - No default entry in JSON message body")
    code, message = code_and_message(sns.publish, TopicArn=topic, MessageStructure="json", Message="not json")
    assert message == "Invalid parameter: Message Structure - JSON message body failed to parse"


def test_filter_policy_on_attributes_selects_messages(sns, sqs, topic):
    policy = {"colour": ["blue", {"prefix": "gr"}], "size": [{"numeric": [">", 5]}], "spam": [{"exists": False}]}
    url, _ = queue_subscribed(sns, sqs, topic, FilterPolicy=json.dumps(policy), RawMessageDelivery="true")

    def publish(body, **attrs):
        sns.publish(TopicArn=topic, Message=body, MessageAttributes={
            k: {"DataType": "Number" if isinstance(v, int) else "String", "StringValue": str(v)}
            for k, v in attrs.items()})

    publish("yes-blue", colour="blue", size=6)
    publish("yes-green", colour="green", size=10)
    publish("no-small", colour="blue", size=5)
    publish("no-red", colour="red", size=9)
    publish("no-spam", colour="blue", size=9, spam="1")
    publish("no-attributes")
    publish("no-size-as-string", colour="blue", size="9")
    bodies = sorted(m["Body"] for m in receive_all(sqs, url, 2))
    assert bodies == ["yes-blue", "yes-green"]
    assert nothing_arrives(sqs, url)


def test_filter_policy_on_the_message_body(sns, sqs, topic):
    policy = {"order": {"status": [{"anything-but": ["cancelled"]}], "total": [{"numeric": [">=", 100]}]}}
    url, _ = queue_subscribed(sns, sqs, topic, FilterPolicy=json.dumps(policy),
                              FilterPolicyScope="MessageBody", RawMessageDelivery="true")
    messages = [{"order": {"status": "paid", "total": 150}}, {"order": {"status": "cancelled", "total": 500}},
                {"order": {"status": "paid", "total": 50}}, "not json"]
    for m in messages:
        sns.publish(TopicArn=topic, Message=m if isinstance(m, str) else json.dumps(m))
    got = receive_all(sqs, url, 1)
    assert [json.loads(m["Body"]) for m in got] == [messages[0]]
    assert nothing_arrives(sqs, url)


def test_one_publish_fans_out_to_every_subscription(sns, sqs, topic):
    first, _ = queue_subscribed(sns, sqs, topic, name="one")
    second, _ = queue_subscribed(sns, sqs, topic, name="two")
    sns.publish(TopicArn=topic, Message="both")
    for url in (first, second):
        assert json.loads(receive_all(sqs, url, 1)[0]["Body"])["Message"] == "both"


def test_fifo_topic_to_fifo_queue_keeps_order_and_deduplicates(sns, sqs):
    topic = sns.create_topic(Name="t.fifo", Attributes={"FifoTopic": "true"})["TopicArn"]
    url, _ = queue_subscribed(sns, sqs, topic, name="q.fifo", RawMessageDelivery="true")
    sent = [sns.publish(TopicArn=topic, Message=f"m{i}", MessageGroupId="g", MessageDeduplicationId=f"d{i}")
            for i in range(3)]
    again = sns.publish(TopicArn=topic, Message="m0", MessageGroupId="g", MessageDeduplicationId="d0")
    assert again["MessageId"] == sent[0]["MessageId"]
    assert again["SequenceNumber"] == sent[0]["SequenceNumber"]
    assert [int(s["SequenceNumber"]) for s in sent] == sorted(int(s["SequenceNumber"]) for s in sent)
    got = receive_all(sqs, url, 3)
    assert [m["Body"] for m in got] == ["m0", "m1", "m2"]
    assert got[0]["Attributes"]["MessageGroupId"] == "g"
    code, message = code_and_message(sns.publish, TopicArn=topic, Message="x", MessageDeduplicationId="d")
    assert message == "Invalid parameter: The MessageGroupId parameter is required for FIFO topics"
    code, message = code_and_message(sns.publish, TopicArn=topic, Message="x", MessageGroupId="g")
    assert code == "InvalidParameter" and "ContentBasedDeduplication" in message


def test_fifo_topic_keeps_groups_in_order_and_exactly_once_under_concurrent_publishers(sns, sqs, client):
    topic = sns.create_topic(Name="orders.fifo", Attributes={"FifoTopic": "true"})["TopicArn"]
    url, _ = queue_subscribed(sns, sqs, topic, name="orders.fifo", RawMessageDelivery="true")

    def publish(c, group, dedup, body):
        return c.publish(TopicArn=topic, Message=body, MessageGroupId=group, MessageDeduplicationId=dedup)

    responses = twin_producers(lambda: client("sns"), publish)
    received = consume_fifo(client, url, len(responses))
    assert len(received) == len(responses) == 90
    assert_fifo_delivery(received, responses)
    for group in ("g0", "g1", "g2"):
        published = [responses["s{}-{}".format(*m["Body"].split(":"))][0] for m in received
                     if m["Attributes"]["MessageGroupId"] == group]
        sequence = [int(p["SequenceNumber"]) for p in published]
        assert sequence == sorted(sequence), group
    assert "Messages" not in sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10)


def test_standard_topics_refuse_fifo_parameters(sns, topic):
    code, message = code_and_message(sns.publish, TopicArn=topic, Message="x", MessageGroupId="g")
    assert code == "InvalidParameter" and message.startswith("Invalid parameter: MessageGroupId")


@pytest.mark.parametrize("kwargs,code", [
    ({"Message": ""}, "InvalidParameter"),
    ({"Message": "x" * 262_145}, "InvalidParameter"),
    ({"Message": "x", "Subject": "line\nbreak"}, "InvalidParameter"),
    ({"Message": "x", "MessageAttributes": {"a": {"DataType": "Integer", "StringValue": "1"}}},
     "ParameterValueInvalid"),
    ({"Message": "x", "MessageAttributes": {"a": {"DataType": "Number", "StringValue": "one"}}},
     "ParameterValueInvalid"),
    ({"Message": "x", "MessageAttributes": {"a": {"DataType": "String", "StringValue": ""}}},
     "ParameterValueInvalid"),
])
def test_publish_validates_messages(sns, topic, kwargs, code):
    assert error_of(sns.publish, TopicArn=topic, **kwargs)["Error"]["Code"] == code


def test_publish_without_a_target_is_invalid(sns):
    code, message = code_and_message(sns.publish, Message="x")
    assert code == "InvalidParameter"
    assert message == "Invalid parameter: TopicArn or TargetArn Reason: no value for required parameter"


def test_publish_batch(sns, sqs, topic):
    url, _ = queue_subscribed(sns, sqs, topic, RawMessageDelivery="true")
    out = sns.publish_batch(TopicArn=topic, PublishBatchRequestEntries=[
        {"Id": "a", "Message": "one"}, {"Id": "b", "Message": "two"}, {"Id": "c", "Message": ""}])
    assert sorted(e["Id"] for e in out["Successful"]) == ["a", "b"]
    assert [(f["Id"], f["Code"], f["SenderFault"]) for f in out["Failed"]] == [("c", "InvalidParameter", True)]
    assert sorted(m["Body"] for m in receive_all(sqs, url, 2)) == ["one", "two"]
    for entries, code in (([], "EmptyBatchRequest"),
                          ([{"Id": str(i), "Message": "x"} for i in range(11)], "TooManyEntriesInBatchRequest"),
                          ([{"Id": "a", "Message": "x"}, {"Id": "a", "Message": "y"}], "BatchEntryIdsNotDistinct"),
                          ([{"Id": "bad id", "Message": "x"}], "InvalidBatchEntryId")):
        assert error_of(sns.publish_batch, TopicArn=topic,
                        PublishBatchRequestEntries=entries)["Error"]["Code"] == code


def test_delivery_to_a_missing_queue_is_traced_as_failed(sns, topic, server):
    ghost = "arn:aws:sqs:us-east-1:000000000000:ghost"
    sns.subscribe(TopicArn=topic, Protocol="sqs", Endpoint=ghost)
    sns.publish(TopicArn=topic, Message="lost")
    failed = server.wait_for_delivery(service="sns", operation="sns:Notification", outcome="failed")
    assert failed["target"] == ghost and failed["attempt"] == 1
    assert "does not exist" in failed["detail"]
    assert server.traces(kind="delivery", operation="sns:DeadLetter") == []


# --- dead-letter queues (RedrivePolicy) -------------------------------------------------

ATTRIBUTES = {"n": {"DataType": "Number", "StringValue": "111"},
              "bin": {"DataType": "Binary", "BinaryValue": b"\x02\x03\x04"}}


def dead_letter_queue(sqs, name="dlq"):
    fifo = name.endswith(".fifo")
    url = sqs.create_queue(QueueName=name, Attributes={"FifoQueue": "true"} if fifo else {})["QueueUrl"]
    return url, sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]


def redrive(sns, subscription, dlq_arn):
    sns.set_subscription_attributes(SubscriptionArn=subscription, AttributeName="RedrivePolicy",
                                    AttributeValue=json.dumps({"deadLetterTargetArn": dlq_arn}))


def dead_letters(server, sqs, dlq_url, dlq_arn, subscription) -> list:
    """The messages the dead-letter queue received, once the move is traced."""
    moved = server.wait_for_delivery(operation="sns:DeadLetter", target=dlq_arn)
    assert (moved["service"], moved["source"], moved["outcome"]) == ("sns", subscription, "delivered")
    return sqs.receive_message(QueueUrl=dlq_url, MaxNumberOfMessages=10, MessageAttributeNames=["All"],
                               AttributeNames=["All"]).get("Messages", [])


def test_failed_sqs_delivery_goes_to_the_dead_letter_queue_as_the_envelope(sns, sqs, topic, server):
    url, sub = queue_subscribed(sns, sqs, topic)
    dlq_url, dlq_arn = dead_letter_queue(sqs)
    redrive(sns, sub, dlq_arn)
    sqs.delete_queue(QueueUrl=url)
    sent = sns.publish(TopicArn=topic, Message="undeliverable", MessageAttributes=ATTRIBUTES)
    failed = server.wait_for_delivery(operation="sns:Notification", outcome="failed")
    assert failed["target"] == "arn:aws:sqs:us-east-1:000000000000:inbox"
    [moved] = dead_letters(server, sqs, dlq_url, dlq_arn, sub)
    envelope = json.loads(moved["Body"])
    assert (envelope["Type"], envelope["MessageId"], envelope["TopicArn"]) == ("Notification", sent["MessageId"], topic)
    assert envelope["Message"] == "undeliverable" and envelope["Signature"]
    assert envelope["MessageAttributes"] == {"n": {"Type": "Number", "Value": "111"},
                                             "bin": {"Type": "Binary", "Value": "AgME"}}
    # AWS adds no message attributes of its own to what it moves to a subscription's DLQ.
    assert "MessageAttributes" not in moved
    assert moved["Attributes"]["SenderId"] == "AIDAIT2UOQQY3AUEKVGXU"


def test_raw_subscription_dead_letters_keep_the_bare_message_and_its_attributes(sns, sqs, topic, server):
    url, sub = queue_subscribed(sns, sqs, topic, RawMessageDelivery="true")
    dlq_url, dlq_arn = dead_letter_queue(sqs)
    redrive(sns, sub, dlq_arn)
    sqs.delete_queue(QueueUrl=url)
    sns.publish(TopicArn=topic, Message="raw and lost", MessageAttributes=ATTRIBUTES)
    [moved] = dead_letters(server, sqs, dlq_url, dlq_arn, sub)
    assert moved["Body"] == "raw and lost"
    assert moved["MessageAttributes"] == {"n": {"DataType": "Number", "StringValue": "111"},
                                          "bin": {"DataType": "Binary", "BinaryValue": b"\x02\x03\x04"}}


def test_fifo_dead_letters_keep_their_group_and_deduplication_ids(sns, sqs, server):
    topic = sns.create_topic(Name="t.fifo", Attributes={"FifoTopic": "true"})["TopicArn"]
    url, sub = queue_subscribed(sns, sqs, topic, name="q.fifo")
    dlq_url, dlq_arn = dead_letter_queue(sqs, "dlq.fifo")
    redrive(sns, sub, dlq_arn)
    sqs.delete_queue(QueueUrl=url)
    sent = sns.publish(TopicArn=topic, Message="m", MessageGroupId="g1", MessageDeduplicationId="d1")
    [moved] = dead_letters(server, sqs, dlq_url, dlq_arn, sub)
    assert moved["Attributes"]["MessageGroupId"] == "g1"
    assert moved["Attributes"]["MessageDeduplicationId"] == "d1"
    envelope = json.loads(moved["Body"])
    assert envelope["SequenceNumber"] == sent["SequenceNumber"]
    # A FIFO topic's envelope has no signature fields (AWS's recorded responses have none).
    assert not {"Signature", "SignatureVersion", "SigningCertURL"} & set(envelope)


def test_missing_lambda_function_dead_letters_the_envelope(sns, sqs, topic, server):
    function = "arn:aws:lambda:us-east-1:000000000000:function:gone"
    sub = sns.subscribe(TopicArn=topic, Protocol="lambda", Endpoint=function,
                        ReturnSubscriptionArn=True)["SubscriptionArn"]
    dlq_url, dlq_arn = dead_letter_queue(sqs)
    redrive(sns, sub, dlq_arn)
    sns.publish(TopicArn=topic, Message="for a function", MessageAttributes=ATTRIBUTES)
    failed = server.wait_for_delivery(operation="sns:Notification", outcome="failed")
    assert failed["target"] == function and "Function not found" in failed["detail"]
    [moved] = dead_letters(server, sqs, dlq_url, dlq_arn, sub)
    envelope = json.loads(moved["Body"])
    assert envelope["Message"] == "for a function" and "Subject" not in envelope
    assert envelope["SigningCertURL"].startswith("https://sns.") and sub in urllib.parse.unquote(envelope["UnsubscribeURL"])
    assert "SigningCertUrl" not in envelope and "UnsubscribeUrl" not in envelope
    assert envelope["MessageAttributes"]["n"] == {"Type": "Number", "Value": "111"}


def test_delivered_messages_and_unredriven_failures_leave_the_dead_letter_queue_empty(sns, sqs, topic, server):
    url, sub = queue_subscribed(sns, sqs, topic)
    dlq_url, dlq_arn = dead_letter_queue(sqs)
    redrive(sns, sub, dlq_arn)
    sns.publish(TopicArn=topic, Message="fine")
    assert json.loads(receive_all(sqs, url, 1)[0]["Body"])["Message"] == "fine"
    sns.set_subscription_attributes(SubscriptionArn=sub, AttributeName="RedrivePolicy", AttributeValue="")
    sqs.delete_queue(QueueUrl=url)
    sns.publish(TopicArn=topic, Message="dropped")
    server.wait_for_delivery(operation="sns:Notification", outcome="failed")
    assert server.traces(kind="delivery", operation="sns:DeadLetter") == []
    assert "Messages" not in sqs.receive_message(QueueUrl=dlq_url)


def test_a_missing_dead_letter_queue_is_traced_as_a_failed_move(sns, sqs, topic, server):
    url, sub = queue_subscribed(sns, sqs, topic)
    missing = "arn:aws:sqs:us-east-1:000000000000:no-such-dlq"
    redrive(sns, sub, missing)
    sqs.delete_queue(QueueUrl=url)
    sns.publish(TopicArn=topic, Message="nowhere to go")
    moved = server.wait_for_delivery(operation="sns:DeadLetter", outcome="failed")
    assert moved["target"] == missing and moved["source"] == sub


# --- HTTP, email, SMS -----------------------------------------------------------------


class Recorder(http.server.BaseHTTPRequestHandler):
    received: list = []

    def do_POST(self):  # noqa: N802 (http.server's naming)
        body = self.rfile.read(int(self.headers["Content-Length"]))
        type(self).received.append((dict(self.headers), body.decode()))
        self.send_response(200)
        self.end_headers()

    def log_message(self, *args):
        pass


@pytest.fixture
def endpoint():
    Recorder.received = []
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Recorder)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/hook", Recorder.received
    httpd.shutdown()


def wait_for(received: list, count: int, timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while len(received) < count and time.monotonic() < deadline:
        time.sleep(0.05)
    assert len(received) >= count, received


def test_http_endpoint_confirms_then_receives_notifications(sns, topic, endpoint):
    url, received = endpoint
    assert sns.subscribe(TopicArn=topic, Protocol="http", Endpoint=url)["SubscriptionArn"] == "pending confirmation"
    wait_for(received, 1)
    headers, body = received[0]
    assert headers["x-amz-sns-message-type"] == "SubscriptionConfirmation"
    confirmation = json.loads(body)
    assert confirmation["Type"] == "SubscriptionConfirmation" and confirmation["TopicArn"] == topic
    assert confirmation["Token"] and confirmation["Signature"]
    assert sns.list_subscriptions()["Subscriptions"][0]["SubscriptionArn"] == "PendingConfirmation"
    sns.publish(TopicArn=topic, Message="before confirming")
    with urllib.request.urlopen(confirmation["SubscribeURL"], timeout=5) as resp:
        assert resp.status == 200
    sub = sns.list_subscriptions()["Subscriptions"][0]["SubscriptionArn"]
    assert sub.startswith(topic + ":")
    sns.publish(TopicArn=topic, Message="after", Subject="s")
    wait_for(received, 2)
    headers, body = received[1]
    assert headers["x-amz-sns-message-type"] == "Notification"
    assert headers["x-amz-sns-subscription-arn"] == sub
    assert headers["x-amz-sns-topic-arn"] == topic
    note = json.loads(body)
    assert (note["Message"], note["Subject"], note["Type"]) == ("after", "s", "Notification")
    assert len(received) == 2


def test_confirm_subscription_with_the_token(sns, topic, endpoint):
    url, received = endpoint
    sns.subscribe(TopicArn=topic, Protocol="http", Endpoint=url)
    wait_for(received, 1)
    token = json.loads(received[0][1])["Token"]
    assert error_of(sns.confirm_subscription, TopicArn=topic, Token="wrong")["Error"]["Code"] == "InvalidParameter"
    sub = sns.confirm_subscription(TopicArn=topic, Token=token)["SubscriptionArn"]
    assert sns.get_subscription_attributes(SubscriptionArn=sub)["Attributes"]["PendingConfirmation"] == "false"


class Refuser(Recorder):
    """Confirms subscriptions, then answers every notification 503."""

    def do_POST(self):  # noqa: N802 (http.server's naming)
        body = self.rfile.read(int(self.headers["Content-Length"]))
        kind = self.headers["x-amz-sns-message-type"]
        type(self).received.append((dict(self.headers), body.decode()))
        self.send_response(200 if kind == "SubscriptionConfirmation" else 503)
        self.end_headers()


def test_http_endpoint_failing_after_the_retries_dead_letters_the_envelope(sns, sqs, topic, server):
    Refuser.received = []
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Refuser)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{httpd.server_address[1]}/refuse"
        sns.subscribe(TopicArn=topic, Protocol="http", Endpoint=url)
        wait_for(Refuser.received, 1)
        sub = sns.confirm_subscription(TopicArn=topic, Token=json.loads(Refuser.received[0][1])["Token"])["SubscriptionArn"]
        dlq_url, dlq_arn = dead_letter_queue(sqs)
        redrive(sns, sub, dlq_arn)
        sns.publish(TopicArn=topic, Message="nobody home", Subject="s")
        first = server.wait_for_delivery(operation="sns:Notification", outcome="retrying")
        assert first["attempt"] == 1 and "503" in first["detail"]
        # The back-off between attempts waits on the server clock; move it past each wait.
        for _ in range(20):
            if server.traces(kind="delivery", operation="sns:Notification", outcome="failed"):
                break
            server.advance_clock(10)
            server.traces(kind="delivery", operation="sns:Notification", outcome="failed", wait=0.5)
        attempts = server.traces(kind="delivery", operation="sns:Notification", target=url)
        assert [(e["attempt"], e["outcome"]) for e in attempts] == [
            (1, "retrying"), (2, "retrying"), (3, "retrying"), (4, "failed")]
        assert len(Refuser.received) == 5
        [moved] = dead_letters(server, sqs, dlq_url, dlq_arn, sub)
        envelope = json.loads(moved["Body"])
        assert (envelope["Message"], envelope["Subject"]) == ("nobody home", "s")
    finally:
        httpd.shutdown()


def test_raw_http_delivery(sns, topic, endpoint):
    url, received = endpoint
    sub = sns.subscribe(TopicArn=topic, Protocol="http", Endpoint=url, ReturnSubscriptionArn=True,
                        Attributes={"RawMessageDelivery": "true"})["SubscriptionArn"]
    wait_for(received, 1)
    sns.confirm_subscription(TopicArn=topic, Token=json.loads(received[0][1])["Token"])
    sns.publish(TopicArn=topic, Message="plain text")
    wait_for(received, 2)
    assert received[1][1] == "plain text"
    assert received[1][0]["x-amz-sns-rawdelivery"] == "true"
    assert sub.startswith(topic)


def test_email_and_sms_are_recorded_in_the_trace(sns, topic, server):
    sns.subscribe(TopicArn=topic, Protocol="email", Endpoint="someone@example.com")
    confirm = server.traces(service="sns", operation="sns:EmailSubscriptionConfirmation", wait=2)
    token = json.loads(confirm[0]["detail"])["Token"]
    sns.confirm_subscription(TopicArn=topic, Token=token)
    sns.subscribe(TopicArn=topic, Protocol="sms", Endpoint="+15555550100")
    sns.publish(TopicArn=topic, Message="hi there", Subject="Hello")
    email = server.traces(service="sns", operation="sns:EmailNotification", wait=2)
    assert email[0]["target"] == "someone@example.com"
    assert json.loads(email[0]["detail"]) == {"Message": "hi there", "Subject": "Hello"}
    sms = server.traces(service="sns", operation="sns:SmsNotification", wait=2)
    assert json.loads(sms[0]["detail"])["Message"] == "hi there"
    sns.publish(PhoneNumber="+15555550123", Message="direct")
    direct = [e for e in server.traces(service="sns", operation="sns:SmsNotification") if e["target"] == "+15555550123"]
    assert json.loads(direct[0]["detail"])["Message"] == "direct"


def test_lambda_subscriptions_publish_to_lambda(sns, topic, server):
    fn = "arn:aws:lambda:us-east-1:000000000000:function:handler"
    sns.subscribe(TopicArn=topic, Protocol="lambda", Endpoint=fn)
    sns.publish(TopicArn=topic, Message="to lambda")
    entries = server.traces(kind="delivery", service="sns", wait=3)
    assert any(e["target"] == fn for e in entries)


# --- AWS CLI --------------------------------------------------------------------------


def test_cli_creates_publishes_and_lists(aws):
    arn = json.loads(aws("sns", "create-topic", "--name", "cli").stdout)["TopicArn"]
    assert arn.endswith(":cli")
    out = json.loads(aws("sns", "publish", "--topic-arn", arn, "--message", "hello").stdout)
    assert out["MessageId"]
    topics = json.loads(aws("sns", "list-topics").stdout)["Topics"]
    assert topics == [{"TopicArn": arn}]
