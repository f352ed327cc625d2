"""SQS beyond send/receive: attributes, visibility, batches, purge, tags, permissions,
dead-letter sources and message move tasks, receive attempt ids."""

from __future__ import annotations

import hashlib
import json
import time

import pytest
from botocore.exceptions import ClientError


def error_of(call, *args, **kwargs) -> dict:
    with pytest.raises(ClientError) as info:
        call(*args, **kwargs)
    return info.value.response


def code_and_message(call, *args, **kwargs) -> tuple[str, str]:
    err = error_of(call, *args, **kwargs)["Error"]
    return err["Code"], err["Message"]


@pytest.fixture
def sqs(client):
    return client("sqs")


@pytest.fixture
def queue(sqs):
    return sqs.create_queue(QueueName="jobs")["QueueUrl"]


@pytest.fixture
def fifo(sqs):
    return sqs.create_queue(QueueName="jobs.fifo", Attributes={"FifoQueue": "true"})["QueueUrl"]


def arn_of(sqs, url: str) -> str:
    return sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]


def attrs_of(sqs, url: str) -> dict:
    return sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["All"])["Attributes"]


# --- SetQueueAttributes ---------------------------------------------------------------


def test_set_queue_attributes_changes_them_and_stamps_last_modified(sqs, queue):
    before = attrs_of(sqs, queue)
    sqs.set_queue_attributes(QueueUrl=queue, Attributes={
        "VisibilityTimeout": "5", "DelaySeconds": "2", "MaximumMessageSize": "2048",
        "MessageRetentionPeriod": "600", "ReceiveMessageWaitTimeSeconds": "1"})
    after = attrs_of(sqs, queue)
    assert (after["VisibilityTimeout"], after["DelaySeconds"], after["MaximumMessageSize"]) == ("5", "2", "2048")
    assert (after["MessageRetentionPeriod"], after["ReceiveMessageWaitTimeSeconds"]) == ("600", "1")
    assert int(after["LastModifiedTimestamp"]) >= int(before["LastModifiedTimestamp"])
    assert after["CreatedTimestamp"] == before["CreatedTimestamp"]


@pytest.mark.parametrize("name,value", [
    ("VisibilityTimeout", "43201"), ("DelaySeconds", "-1"), ("MaximumMessageSize", "1000"),
    ("MessageRetentionPeriod", "1209601"), ("ReceiveMessageWaitTimeSeconds", "x"),
])
def test_set_queue_attributes_validates_values(sqs, queue, name, value):
    assert code_and_message(sqs.set_queue_attributes, QueueUrl=queue, Attributes={name: value}) == (
        "InvalidAttributeValue", f"Invalid value for the parameter {name}.")
    assert attrs_of(sqs, queue)["VisibilityTimeout"] == "30"


def test_set_queue_attributes_rejects_unknown_and_fifo_only_names_on_standard_queues(sqs, queue):
    assert code_and_message(sqs.set_queue_attributes, QueueUrl=queue, Attributes={"Colour": "red"}) == (
        "InvalidAttributeName", "Unknown Attribute Colour.")
    code, _ = code_and_message(sqs.set_queue_attributes, QueueUrl=queue,
                               Attributes={"ContentBasedDeduplication": "true"})
    assert code == "InvalidAttributeName"
    code, _ = code_and_message(sqs.set_queue_attributes, QueueUrl=queue, Attributes={"FifoQueue": "true"})
    assert code == "InvalidAttributeValue"


def test_fifo_attributes_can_be_changed_on_fifo_queues(sqs, fifo):
    sqs.set_queue_attributes(QueueUrl=fifo, Attributes={
        "ContentBasedDeduplication": "true", "DeduplicationScope": "messageGroup",
        "FifoThroughputLimit": "perMessageGroupId"})
    attrs = attrs_of(sqs, fifo)
    assert attrs["ContentBasedDeduplication"] == "true"
    assert (attrs["DeduplicationScope"], attrs["FifoThroughputLimit"]) == ("messageGroup", "perMessageGroupId")
    assert sqs.send_message(QueueUrl=fifo, MessageBody="x", MessageGroupId="g")["MessageId"]
    code, _ = code_and_message(sqs.set_queue_attributes, QueueUrl=fifo, Attributes={"DeduplicationScope": "all"})
    assert code == "InvalidAttributeValue"


def test_redrive_policy_set_later_and_cleared_with_an_empty_value(sqs, queue):
    dlq = sqs.create_queue(QueueName="dead")["QueueUrl"]
    policy = json.dumps({"deadLetterTargetArn": arn_of(sqs, dlq), "maxReceiveCount": 5})
    sqs.set_queue_attributes(QueueUrl=queue, Attributes={"RedrivePolicy": policy})
    assert json.loads(attrs_of(sqs, queue)["RedrivePolicy"])["maxReceiveCount"] == 5
    sqs.set_queue_attributes(QueueUrl=queue, Attributes={"RedrivePolicy": ""})
    assert "RedrivePolicy" not in attrs_of(sqs, queue)
    bad = json.dumps({"deadLetterTargetArn": arn_of(sqs, dlq), "maxReceiveCount": 0})
    code, message = code_and_message(sqs.set_queue_attributes, QueueUrl=queue, Attributes={"RedrivePolicy": bad})
    assert code == "InvalidParameterValue"
    assert "Invalid value for maxReceiveCount: 0" in message


def test_dead_letter_queue_must_be_of_the_same_type(sqs, queue):
    fifo_dlq = sqs.create_queue(QueueName="dead.fifo", Attributes={"FifoQueue": "true"})["QueueUrl"]
    policy = json.dumps({"deadLetterTargetArn": arn_of(sqs, fifo_dlq), "maxReceiveCount": 1})
    code, message = code_and_message(sqs.set_queue_attributes, QueueUrl=queue, Attributes={"RedrivePolicy": policy})
    assert code == "InvalidParameterValue"
    assert message.endswith("Dead-letter queue must be same type of queue as the source.")


def test_redrive_allow_policy_is_validated_and_enforced(sqs, queue):
    dlq = sqs.create_queue(QueueName="dead")["QueueUrl"]
    for bad in ('{"redrivePermission":"sometimes"}', '{"redrivePermission":"byQueue"}',
                '{"redrivePermission":"allowAll","sourceQueueArns":["arn:aws:sqs:us-east-1:000000000000:x"]}',
                "not json"):
        code, message = code_and_message(sqs.set_queue_attributes, QueueUrl=dlq,
                                         Attributes={"RedriveAllowPolicy": bad})
        assert code == "InvalidParameterValue", bad
        assert "unsupported format" in message
    sqs.set_queue_attributes(QueueUrl=dlq, Attributes={"RedriveAllowPolicy": '{"redrivePermission":"denyAll"}'})
    assert json.loads(attrs_of(sqs, dlq)["RedriveAllowPolicy"]) == {"redrivePermission": "denyAll"}
    policy = json.dumps({"deadLetterTargetArn": arn_of(sqs, dlq), "maxReceiveCount": 1})
    code, _ = code_and_message(sqs.set_queue_attributes, QueueUrl=queue, Attributes={"RedrivePolicy": policy})
    assert code == "InvalidParameterValue"
    allowed = json.dumps({"redrivePermission": "byQueue", "sourceQueueArns": [arn_of(sqs, queue)]})
    sqs.set_queue_attributes(QueueUrl=dlq, Attributes={"RedriveAllowPolicy": allowed})
    sqs.set_queue_attributes(QueueUrl=queue, Attributes={"RedrivePolicy": policy})
    other = sqs.create_queue(QueueName="other")["QueueUrl"]
    code, _ = code_and_message(sqs.set_queue_attributes, QueueUrl=other, Attributes={"RedrivePolicy": policy})
    assert code == "InvalidParameterValue"


def test_set_queue_attributes_on_a_missing_queue(sqs, server):
    with pytest.raises(sqs.exceptions.QueueDoesNotExist):
        sqs.set_queue_attributes(QueueUrl=f"{server.endpoint}/000000000000/ghost",
                                 Attributes={"DelaySeconds": "1"})


# --- ChangeMessageVisibility ----------------------------------------------------------


def received(sqs, url, **kwargs) -> list:
    return sqs.receive_message(QueueUrl=url, **kwargs).get("Messages", [])


def test_change_visibility_to_zero_makes_a_message_visible_at_once(sqs, queue):
    sqs.send_message(QueueUrl=queue, MessageBody="x")
    handle = received(sqs, queue, VisibilityTimeout=600)[0]["ReceiptHandle"]
    assert received(sqs, queue) == []
    sqs.change_message_visibility(QueueUrl=queue, ReceiptHandle=handle, VisibilityTimeout=0)
    assert received(sqs, queue)[0]["Body"] == "x"


def test_change_visibility_extends_the_hidden_time(sqs, queue):
    sqs.send_message(QueueUrl=queue, MessageBody="x")
    handle = received(sqs, queue, VisibilityTimeout=1)[0]["ReceiptHandle"]
    sqs.change_message_visibility(QueueUrl=queue, ReceiptHandle=handle, VisibilityTimeout=30)
    time.sleep(1.2)
    assert received(sqs, queue) == []


def test_change_visibility_of_a_message_not_in_flight_is_message_not_inflight(sqs, queue):
    sqs.send_message(QueueUrl=queue, MessageBody="x")
    handle = received(sqs, queue, VisibilityTimeout=0)[0]["ReceiptHandle"]
    err = error_of(sqs.change_message_visibility, QueueUrl=queue, ReceiptHandle=handle, VisibilityTimeout=10)
    assert err["Error"]["Code"] == "AWS.SimpleQueueService.MessageNotInflight"
    assert err["Error"]["QueryErrorCode"] == "MessageNotInflight"
    assert err["ResponseMetadata"]["HTTPStatusCode"] == 400


def test_change_visibility_of_a_deleted_message_is_invalid_parameter_value(sqs, queue):
    sqs.send_message(QueueUrl=queue, MessageBody="x")
    handle = received(sqs, queue)[0]["ReceiptHandle"]
    sqs.delete_message(QueueUrl=queue, ReceiptHandle=handle)
    code, message = code_and_message(sqs.change_message_visibility, QueueUrl=queue, ReceiptHandle=handle,
                                     VisibilityTimeout=10)
    assert code == "InvalidParameterValue"
    assert message.endswith("Reason: Message does not exist or is not available for visibility timeout change.")


def test_change_visibility_checks_its_parameters(sqs, queue):
    sqs.send_message(QueueUrl=queue, MessageBody="x")
    handle = received(sqs, queue)[0]["ReceiptHandle"]
    code, message = code_and_message(sqs.change_message_visibility, QueueUrl=queue, ReceiptHandle=handle,
                                     VisibilityTimeout=43201)
    assert code == "InvalidParameterValue"
    assert message.startswith("Value 43201 for parameter VisibilityTimeout is invalid.")
    with pytest.raises(sqs.exceptions.ReceiptHandleIsInvalid):
        sqs.change_message_visibility(QueueUrl=queue, ReceiptHandle="junk", VisibilityTimeout=1)


# --- batches --------------------------------------------------------------------------


def test_send_message_batch_reports_each_entry(sqs, queue):
    attrs = {"k": {"DataType": "String", "StringValue": "v"}}
    out = sqs.send_message_batch(QueueUrl=queue, Entries=[
        {"Id": "a", "MessageBody": "first", "MessageAttributes": attrs},
        {"Id": "b", "MessageBody": "second", "DelaySeconds": 0},
        {"Id": "c", "MessageBody": "bad\x01"},
        {"Id": "d", "MessageBody": "x", "DelaySeconds": 901},
    ])
    ok = {e["Id"]: e for e in out["Successful"]}
    assert set(ok) == {"a", "b"}
    assert ok["a"]["MD5OfMessageBody"] == hashlib.md5(b"first").hexdigest()
    assert "MD5OfMessageAttributes" in ok["a"] and "MD5OfMessageAttributes" not in ok["b"]
    failed = {e["Id"]: e for e in out["Failed"]}
    assert failed["c"]["Code"] == "InvalidMessageContents" and failed["c"]["SenderFault"] is True
    assert failed["d"]["Code"] == "InvalidParameterValue"
    bodies = sorted(m["Body"] for m in received(sqs, queue, MaxNumberOfMessages=10))
    assert bodies == ["first", "second"]


def test_send_message_batch_keeps_fifo_order_and_deduplicates(sqs, fifo):
    out = sqs.send_message_batch(QueueUrl=fifo, Entries=[
        {"Id": str(i), "MessageBody": f"m{i}", "MessageGroupId": "g", "MessageDeduplicationId": f"d{i % 3}"}
        for i in range(5)])
    assert len(out["Successful"]) == 5 and not out.get("Failed")
    seqs = [int(e["SequenceNumber"]) for e in out["Successful"][:3]]
    assert seqs == sorted(seqs)
    got = received(sqs, fifo, MaxNumberOfMessages=10)
    assert [m["Body"] for m in got] == ["m0", "m1", "m2"]


@pytest.mark.parametrize("entries,code,message", [
    ([], "AWS.SimpleQueueService.EmptyBatchRequest",
     "There should be at least one SendMessageBatchRequestEntry in the request."),
    ([{"Id": str(i), "MessageBody": "x"} for i in range(11)], "AWS.SimpleQueueService.TooManyEntriesInBatchRequest",
     "Maximum number of entries per request are 10. You have sent 11."),
    ([{"Id": "a", "MessageBody": "x"}, {"Id": "a", "MessageBody": "y"}],
     "AWS.SimpleQueueService.BatchEntryIdsNotDistinct", "Id a repeated."),
    ([{"Id": "not ok!", "MessageBody": "x"}], "AWS.SimpleQueueService.InvalidBatchEntryId",
     "A batch entry id can only contain alphanumeric characters, hyphens and underscores. "
     "It can be at most 80 letters long."),
    ([{"Id": str(i), "MessageBody": "x" * 200_000} for i in range(6)], "AWS.SimpleQueueService.BatchRequestTooLong",
     "Batch requests cannot be longer than 1048576 bytes. You have sent 1200000 bytes."),
])
def test_send_message_batch_refuses_malformed_batches(sqs, queue, entries, code, message):
    err = error_of(sqs.send_message_batch, QueueUrl=queue, Entries=entries)
    assert (err["Error"]["Code"], err["Error"]["Message"]) == (code, message)
    assert err["ResponseMetadata"]["HTTPStatusCode"] == 400
    assert received(sqs, queue) == []


def test_delete_message_batch(sqs, queue):
    for i in range(3):
        sqs.send_message(QueueUrl=queue, MessageBody=str(i))
    got = received(sqs, queue, MaxNumberOfMessages=10, VisibilityTimeout=0)
    entries = [{"Id": f"e{i}", "ReceiptHandle": m["ReceiptHandle"]} for i, m in enumerate(got)]
    out = sqs.delete_message_batch(QueueUrl=queue, Entries=entries + [{"Id": "junk", "ReceiptHandle": "junk"}])
    assert sorted(e["Id"] for e in out["Successful"]) == ["e0", "e1", "e2"]
    assert [(e["Id"], e["Code"]) for e in out["Failed"]] == [("junk", "ReceiptHandleIsInvalid")]
    assert received(sqs, queue) == []
    err = error_of(sqs.delete_message_batch, QueueUrl=queue, Entries=[])
    assert err["Error"]["Message"] == "There should be at least one DeleteMessageBatchRequestEntry in the request."


def test_change_message_visibility_batch(sqs, queue):
    for i in range(2):
        sqs.send_message(QueueUrl=queue, MessageBody=str(i))
    got = received(sqs, queue, MaxNumberOfMessages=10, VisibilityTimeout=600)
    out = sqs.change_message_visibility_batch(QueueUrl=queue, Entries=[
        {"Id": f"e{i}", "ReceiptHandle": m["ReceiptHandle"], "VisibilityTimeout": 0} for i, m in enumerate(got)
    ] + [{"Id": "bad", "ReceiptHandle": got[0]["ReceiptHandle"], "VisibilityTimeout": 50000}])
    assert sorted(e["Id"] for e in out["Successful"]) == ["e0", "e1"]
    assert [(e["Id"], e["Code"]) for e in out["Failed"]] == [("bad", "InvalidParameterValue")]
    assert len(received(sqs, queue, MaxNumberOfMessages=10)) == 2
    err = error_of(sqs.change_message_visibility_batch, QueueUrl=queue, Entries=[])
    assert err["Error"]["Code"] == "AWS.SimpleQueueService.EmptyBatchRequest"


# --- purge ----------------------------------------------------------------------------


def test_purge_queue_empties_it_and_a_second_purge_is_refused(sqs, queue):
    for i in range(3):
        sqs.send_message(QueueUrl=queue, MessageBody=str(i))
    received(sqs, queue)
    sqs.purge_queue(QueueUrl=queue)
    attrs = attrs_of(sqs, queue)
    assert attrs["ApproximateNumberOfMessages"] == attrs["ApproximateNumberOfMessagesNotVisible"] == "0"
    err = error_of(sqs.purge_queue, QueueUrl=queue)
    assert err["Error"]["Code"] == "AWS.SimpleQueueService.PurgeQueueInProgress"
    assert err["Error"]["Message"] == "Only one PurgeQueue operation on jobs is allowed every 60 seconds."
    assert err["ResponseMetadata"]["HTTPStatusCode"] == 403
    sqs.send_message(QueueUrl=queue, MessageBody="after")
    assert received(sqs, queue)[0]["Body"] == "after"


# --- tags -----------------------------------------------------------------------------


def test_tags_are_added_listed_and_removed(sqs):
    url = sqs.create_queue(QueueName="tagged", tags={"team": "a"})["QueueUrl"]
    assert sqs.list_queue_tags(QueueUrl=url)["Tags"] == {"team": "a"}
    sqs.tag_queue(QueueUrl=url, Tags={"env": "dev", "team": "b"})
    assert sqs.list_queue_tags(QueueUrl=url)["Tags"] == {"team": "b", "env": "dev"}
    sqs.untag_queue(QueueUrl=url, TagKeys=["team", "absent"])
    assert sqs.list_queue_tags(QueueUrl=url)["Tags"] == {"env": "dev"}
    sqs.untag_queue(QueueUrl=url, TagKeys=["env"])
    assert "Tags" not in sqs.list_queue_tags(QueueUrl=url)


def test_a_queue_holds_at_most_fifty_tags(sqs, queue):
    sqs.tag_queue(QueueUrl=queue, Tags={f"k{i}": "v" for i in range(50)})
    code, message = code_and_message(sqs.tag_queue, QueueUrl=queue, Tags={"one-more": "v"})
    assert (code, message) == ("InvalidParameterValue", "Too many tags added for queue jobs.")
    assert len(sqs.list_queue_tags(QueueUrl=queue)["Tags"]) == 50


# --- permissions ----------------------------------------------------------------------


def test_add_permission_writes_a_policy_statement_and_remove_takes_it_out(sqs, queue):
    arn = arn_of(sqs, queue)
    sqs.add_permission(QueueUrl=queue, Label="senders", AWSAccountIds=["111122223333"], Actions=["SendMessage"])
    sqs.add_permission(QueueUrl=queue, Label="readers", AWSAccountIds=["111122223333", "444455556666"],
                       Actions=["ReceiveMessage", "DeleteMessage"])
    policy = json.loads(attrs_of(sqs, queue)["Policy"])
    assert policy["Version"] == "2012-10-17"
    first, second = policy["Statement"]
    assert first == {"Sid": "senders", "Effect": "Allow", "Principal": {"AWS": "arn:aws:iam::111122223333:root"},
                     "Action": "SQS:SendMessage", "Resource": arn}
    assert second["Action"] == ["SQS:ReceiveMessage", "SQS:DeleteMessage"]
    assert len(second["Principal"]["AWS"]) == 2
    code, message = code_and_message(sqs.add_permission, QueueUrl=queue, Label="senders",
                                     AWSAccountIds=["111122223333"], Actions=["SendMessage"])
    assert (code, message) == ("InvalidParameterValue",
                               "Value senders for parameter Label is invalid. Reason: Already exists.")
    sqs.remove_permission(QueueUrl=queue, Label="senders")
    assert [s["Sid"] for s in json.loads(attrs_of(sqs, queue)["Policy"])["Statement"]] == ["readers"]
    sqs.remove_permission(QueueUrl=queue, Label="readers")
    assert "Policy" not in attrs_of(sqs, queue)
    code, message = code_and_message(sqs.remove_permission, QueueUrl=queue, Label="readers")
    assert code == "InvalidParameterValue"
    assert message.endswith("Reason: can't find label on existing policy.")


def test_add_permission_refuses_owner_only_and_too_many_actions(sqs, queue):
    code, _ = code_and_message(sqs.add_permission, QueueUrl=queue, Label="x", AWSAccountIds=["111122223333"],
                               Actions=["DeleteQueue"])
    assert code == "InvalidParameterValue"
    err = error_of(sqs.add_permission, QueueUrl=queue, Label="x", AWSAccountIds=["111122223333"],
                   Actions=["SendMessage"] * 8)
    assert (err["Error"]["Code"], err["Error"]["Message"]) == ("OverLimit", "8 Actions were found, maximum allowed is 7.")
    assert err["ResponseMetadata"]["HTTPStatusCode"] == 403


# --- dead-letter sources and move tasks -----------------------------------------------


def dead_letter_pair(sqs, max_receives=1):
    dlq = sqs.create_queue(QueueName="dead")["QueueUrl"]
    policy = json.dumps({"deadLetterTargetArn": arn_of(sqs, dlq), "maxReceiveCount": max_receives})
    src = sqs.create_queue(QueueName="src", Attributes={"RedrivePolicy": policy})["QueueUrl"]
    return src, dlq


def test_list_dead_letter_source_queues(sqs, server):
    src, dlq = dead_letter_pair(sqs)
    policy = attrs_of(sqs, src)["RedrivePolicy"]
    other = sqs.create_queue(QueueName="src2", Attributes={"RedrivePolicy": policy})["QueueUrl"]
    assert sorted(sqs.list_dead_letter_source_queues(QueueUrl=dlq)["queueUrls"]) == [src, other]
    page = sqs.list_dead_letter_source_queues(QueueUrl=dlq, MaxResults=1)
    assert page["queueUrls"] == [src] and page["NextToken"]
    rest = sqs.list_dead_letter_source_queues(QueueUrl=dlq, MaxResults=1, NextToken=page["NextToken"])
    assert rest["queueUrls"] == [other] and "NextToken" not in rest
    assert sqs.list_dead_letter_source_queues(QueueUrl=src)["queueUrls"] == []


def dead_letter_one(sqs, src, dlq, body="poison"):
    sqs.send_message(QueueUrl=src, MessageBody=body)
    received(sqs, src, VisibilityTimeout=0)
    assert received(sqs, src) == []


def test_message_move_task_returns_dead_letters_to_their_source(sqs):
    src, dlq = dead_letter_pair(sqs)
    dead_letter_one(sqs, src, dlq)
    handle = sqs.start_message_move_task(SourceArn=arn_of(sqs, dlq))["TaskHandle"]
    assert handle
    got = received(sqs, src, MessageSystemAttributeNames=["All"])
    assert got[0]["Body"] == "poison"
    assert got[0]["Attributes"]["ApproximateReceiveCount"] == "1"
    assert "DeadLetterQueueSourceArn" not in got[0]["Attributes"]
    tasks = sqs.list_message_move_tasks(SourceArn=arn_of(sqs, dlq))["Results"]
    assert len(tasks) == 1
    assert tasks[0]["Status"] == "COMPLETED"
    assert tasks[0]["ApproximateNumberOfMessagesMoved"] == 1
    assert tasks[0]["SourceArn"] == arn_of(sqs, dlq)
    with pytest.raises(sqs.exceptions.ResourceNotFoundException):
        sqs.cancel_message_move_task(TaskHandle=handle)


def test_message_move_task_to_a_named_destination(sqs):
    src, dlq = dead_letter_pair(sqs)
    dead_letter_one(sqs, src, dlq, "one")
    elsewhere = sqs.create_queue(QueueName="elsewhere")["QueueUrl"]
    sqs.start_message_move_task(SourceArn=arn_of(sqs, dlq), DestinationArn=arn_of(sqs, elsewhere),
                                MaxNumberOfMessagesPerSecond=10)
    assert received(sqs, elsewhere)[0]["Body"] == "one"
    task = sqs.list_message_move_tasks(SourceArn=arn_of(sqs, dlq), MaxResults=10)["Results"][0]
    assert task["DestinationArn"] == arn_of(sqs, elsewhere)
    assert task["MaxNumberOfMessagesPerSecond"] == 10


def test_message_move_task_needs_a_dead_letter_queue(sqs, queue):
    code, message = code_and_message(sqs.start_message_move_task, SourceArn=arn_of(sqs, queue))
    assert (code, message) == ("InvalidParameterValue", "Source queue must be configured as a Dead Letter Queue.")
    err = error_of(sqs.start_message_move_task, SourceArn="arn:aws:sqs:us-east-1:000000000000:ghost")
    assert err["Error"]["Code"] == "ResourceNotFoundException"
    with pytest.raises(sqs.exceptions.ResourceNotFoundException):
        sqs.list_message_move_tasks(SourceArn="arn:aws:sqs:us-east-1:000000000000:ghost")


# --- ReceiveRequestAttemptId ----------------------------------------------------------


def test_receive_request_attempt_id_repeats_the_same_fifo_receive(sqs, fifo):
    for i in range(2):
        sqs.send_message(QueueUrl=fifo, MessageBody=str(i), MessageGroupId=str(i), MessageDeduplicationId=str(i))
    first = received(sqs, fifo, ReceiveRequestAttemptId="try-1")
    again = received(sqs, fifo, ReceiveRequestAttemptId="try-1")
    assert [m["MessageId"] for m in first] == [m["MessageId"] for m in again]
    assert first[0]["ReceiptHandle"] == again[0]["ReceiptHandle"]
    other = received(sqs, fifo, ReceiveRequestAttemptId="try-2")
    assert other[0]["Body"] == "1"
    code, _ = code_and_message(sqs.receive_message, QueueUrl=fifo, ReceiveRequestAttemptId="x" * 129)
    assert code == "InvalidParameterValue"


# --- query protocol -------------------------------------------------------------------


def test_batch_over_the_query_protocol(server):
    import urllib.parse
    import xml.etree.ElementTree as ET
    ns = {"q": "http://queue.amazonaws.com/doc/2012-11-05/"}
    form = {"Content-Type": "application/x-www-form-urlencoded"}

    def call(params):
        body = urllib.parse.urlencode({"Version": "2012-11-05", **params}).encode()
        status, _, raw = server.request("POST", "/", body, form)
        return status, ET.fromstring(raw)

    _, root = call({"Action": "CreateQueue", "QueueName": "q"})
    url = root.find("q:CreateQueueResult/q:QueueUrl", ns).text
    status, root = call({"Action": "SendMessageBatch", "QueueUrl": url,
                         "SendMessageBatchRequestEntry.1.Id": "a",
                         "SendMessageBatchRequestEntry.1.MessageBody": "one",
                         "SendMessageBatchRequestEntry.2.Id": "b",
                         "SendMessageBatchRequestEntry.2.MessageBody": "two"})
    assert status == 200
    ids = [e.find("q:Id", ns).text for e in root.findall("q:SendMessageBatchResult/q:SendMessageBatchResultEntry", ns)]
    assert ids == ["a", "b"]
    status, root = call({"Action": "SendMessageBatch", "QueueUrl": url,
                         "SendMessageBatchRequestEntry.1.Id": "a",
                         "SendMessageBatchRequestEntry.1.MessageBody": "one",
                         "SendMessageBatchRequestEntry.2.Id": "a",
                         "SendMessageBatchRequestEntry.2.MessageBody": "two"})
    assert status == 400
    assert root.find("q:Error/q:Code", ns).text == "AWS.SimpleQueueService.BatchEntryIdsNotDistinct"
    status, root = call({"Action": "PurgeQueue", "QueueUrl": url})
    assert status == 200
    status, root = call({"Action": "PurgeQueue", "QueueUrl": url})
    assert (status, root.find("q:Error/q:Code", ns).text) == (403, "AWS.SimpleQueueService.PurgeQueueInProgress")
