"""SQS over the query protocol: raw form POSTs, as older SDKs send them, answered in XML."""

from __future__ import annotations

import hashlib
import struct
import urllib.parse
import xml.etree.ElementTree as ET

import pytest

NS = {"q": "http://queue.amazonaws.com/doc/2012-11-05/"}
FORM = {"Content-Type": "application/x-www-form-urlencoded"}
SIGNED = dict(FORM, Authorization=(
    "AWS4-HMAC-SHA256 Credential=test/20260101/us-east-1/sqs/aws4_request, "
    "SignedHeaders=content-type;host;x-amz-date, Signature=0000"), **{"X-Amz-Date": "20260101T000000Z"})


def call(server, params: dict, headers=FORM, path="/"):
    body = urllib.parse.urlencode({"Version": "2012-11-05", **params})
    status, _, raw = server.request("POST", path, body.encode(), headers)
    return status, ET.fromstring(raw)


def ok(server, params: dict, headers=FORM, path="/"):
    status, root = call(server, params, headers, path)
    assert status == 200, ET.tostring(root)
    action = params["Action"]
    assert root.tag == f"{{{NS['q']}}}{action}Response"
    assert root.find("q:ResponseMetadata/q:RequestId", NS).text
    return root


def error(server, params: dict, headers=FORM):
    status, root = call(server, params, headers)
    assert root.tag == f"{{{NS['q']}}}ErrorResponse"
    err = root.find("q:Error", NS)
    assert root.find("q:RequestId", NS).text
    return status, err.find("q:Type", NS).text, err.find("q:Code", NS).text, err.find("q:Message", NS).text


def create(server, name="jobs", **attributes) -> str:
    params = {"Action": "CreateQueue", "QueueName": name}
    for i, (k, v) in enumerate(attributes.items(), 1):
        params[f"Attribute.{i}.Name"] = k
        params[f"Attribute.{i}.Value"] = v
    root = ok(server, params)
    return root.find("q:CreateQueueResult/q:QueueUrl", NS).text


@pytest.mark.parametrize("headers", [FORM, SIGNED], ids=["unsigned", "signed"])
def test_create_queue_answers_with_the_queue_url(server, headers):
    root = ok(server, {"Action": "CreateQueue", "QueueName": "jobs"}, headers)
    assert root.find("q:CreateQueueResult/q:QueueUrl", NS).text == f"{server.endpoint}/000000000000/jobs"
    root = ok(server, {"Action": "GetQueueUrl", "QueueName": "jobs"}, headers)
    assert root.find("q:GetQueueUrlResult/q:QueueUrl", NS).text == f"{server.endpoint}/000000000000/jobs"


def test_signed_requests_act_in_the_signing_account(server):
    headers = dict(SIGNED, Authorization=SIGNED["Authorization"].replace("Credential=test", "Credential=111122223333"))
    root = ok(server, {"Action": "CreateQueue", "QueueName": "theirs"}, headers)
    assert root.find("q:CreateQueueResult/q:QueueUrl", NS).text.endswith("/111122223333/theirs")


def test_attributes_are_flattened_name_value_pairs(server):
    url = create(server, VisibilityTimeout="45", DelaySeconds="2")
    root = ok(server, {"Action": "GetQueueAttributes", "QueueUrl": url,
                       "AttributeName.1": "VisibilityTimeout", "AttributeName.2": "DelaySeconds",
                       "AttributeName.3": "QueueArn"})
    pairs = {a.find("q:Name", NS).text: a.find("q:Value", NS).text
             for a in root.findall("q:GetQueueAttributesResult/q:Attribute", NS)}
    assert pairs == {"VisibilityTimeout": "45", "DelaySeconds": "2",
                     "QueueArn": "arn:aws:sqs:us-east-1:000000000000:jobs"}


def test_send_receive_delete_round_trip_with_md5s(server):
    url = create(server)
    root = ok(server, {"Action": "SendMessage", "QueueUrl": url, "MessageBody": "hello <xml> & co",
                       "MessageAttribute.1.Name": "colour",
                       "MessageAttribute.1.Value.DataType": "String",
                       "MessageAttribute.1.Value.StringValue": "blue"})
    result = root.find("q:SendMessageResult", NS)
    assert result.find("q:MD5OfMessageBody", NS).text == hashlib.md5(b"hello <xml> & co").hexdigest()
    expected_attr_md5 = hashlib.md5(
        struct.pack(">I", 6) + b"colour" + struct.pack(">I", 6) + b"String" + b"\x01" + struct.pack(">I", 4) + b"blue"
    ).hexdigest()
    assert result.find("q:MD5OfMessageAttributes", NS).text == expected_attr_md5
    message_id = result.find("q:MessageId", NS).text

    root = ok(server, {"Action": "ReceiveMessage", "QueueUrl": url, "AttributeName.1": "All",
                       "MessageAttributeName.1": "All"})
    messages = root.findall("q:ReceiveMessageResult/q:Message", NS)
    assert len(messages) == 1
    m = messages[0]
    assert m.find("q:MessageId", NS).text == message_id
    assert m.find("q:Body", NS).text == "hello <xml> & co"
    assert m.find("q:MD5OfBody", NS).text == hashlib.md5(b"hello <xml> & co").hexdigest()
    assert m.find("q:MD5OfMessageAttributes", NS).text == expected_attr_md5
    system = {a.find("q:Name", NS).text: a.find("q:Value", NS).text for a in m.findall("q:Attribute", NS)}
    assert system["ApproximateReceiveCount"] == "1"
    assert system["SenderId"] == "000000000000"
    attr = m.find("q:MessageAttribute", NS)
    assert attr.find("q:Name", NS).text == "colour"
    assert attr.find("q:Value/q:DataType", NS).text == "String"
    assert attr.find("q:Value/q:StringValue", NS).text == "blue"

    ok(server, {"Action": "DeleteMessage", "QueueUrl": url, "ReceiptHandle": m.find("q:ReceiptHandle", NS).text})
    root = ok(server, {"Action": "ReceiveMessage", "QueueUrl": url, "VisibilityTimeout": "0"})
    assert root.findall("q:ReceiveMessageResult/q:Message", NS) == []


def test_binary_attributes_travel_as_base64(server):
    url = create(server)
    ok(server, {"Action": "SendMessage", "QueueUrl": url, "MessageBody": "b",
                "MessageAttribute.1.Name": "raw", "MessageAttribute.1.Value.DataType": "Binary",
                "MessageAttribute.1.Value.BinaryValue": "AAEC"})
    root = ok(server, {"Action": "ReceiveMessage", "QueueUrl": url, "MessageAttributeName.1": "raw"})
    value = root.find("q:ReceiveMessageResult/q:Message/q:MessageAttribute/q:Value", NS)
    assert value.find("q:BinaryValue", NS).text == "AAEC"


def test_queue_url_as_the_request_path_is_accepted(server):
    url = create(server)
    path = urllib.parse.urlparse(url).path
    ok(server, {"Action": "SendMessage", "QueueUrl": url, "MessageBody": "via path"}, path=path)
    root = ok(server, {"Action": "ListQueues"})
    assert [u.text for u in root.findall("q:ListQueuesResult/q:QueueUrl", NS)] == [url]


def test_missing_queue_is_non_existent_queue(server):
    status, fault, code, message = error(server, {"Action": "GetQueueUrl", "QueueName": "ghost"})
    assert (status, fault, code) == (400, "Sender", "AWS.SimpleQueueService.NonExistentQueue")
    assert message == "The specified queue does not exist."
    status, _, code, _ = error(server, {"Action": "SendMessage", "MessageBody": "x",
                                        "QueueUrl": f"{server.endpoint}/000000000000/ghost"})
    assert (status, code) == (400, "AWS.SimpleQueueService.NonExistentQueue")


def test_conflicting_create_is_queue_already_exists(server):
    create(server, VisibilityTimeout="10")
    status, _, code, message = error(server, {"Action": "CreateQueue", "QueueName": "jobs",
                                              "Attribute.1.Name": "VisibilityTimeout", "Attribute.1.Value": "20"})
    assert (status, code) == (400, "QueueAlreadyExists")
    assert message.endswith("different value for attribute VisibilityTimeout")


def test_missing_parameters_are_missing_parameter(server):
    url = create(server)
    status, _, code, message = error(server, {"Action": "SendMessage", "QueueUrl": url})
    assert (status, code, message) == (400, "MissingParameter", "The request must contain the parameter MessageBody.")
    _, _, code, message = error(server, {"Action": "DeleteMessage", "QueueUrl": url})
    assert (code, message) == ("MissingParameter", "The request must contain the parameter ReceiptHandle.")
    _, _, code, _ = error(server, {"Action": "CreateQueue"})
    assert code == "MissingParameter"


def test_bad_values_are_invalid_parameter_value(server):
    url = create(server)
    _, _, code, _ = error(server, {"Action": "ReceiveMessage", "QueueUrl": url, "MaxNumberOfMessages": "11"})
    assert code == "InvalidParameterValue"
    _, _, code, _ = error(server, {"Action": "ReceiveMessage", "QueueUrl": url, "MaxNumberOfMessages": "many"})
    assert code == "InvalidParameterValue"
    _, _, code, message = error(server, {"Action": "CreateQueue", "QueueName": "q",
                                         "Attribute.1.Name": "DelaySeconds", "Attribute.1.Value": "1000"})
    assert (code, message) == ("InvalidAttributeValue", "Invalid value for the parameter DelaySeconds.")


def test_garbage_receipt_handle_is_receipt_handle_is_invalid(server):
    url = create(server)
    status, _, code, _ = error(server, {"Action": "DeleteMessage", "QueueUrl": url, "ReceiptHandle": "junk"})
    assert (status, code) == (400, "ReceiptHandleIsInvalid")


def test_invalid_message_contents_in_query_form(server):
    url = create(server)
    _, _, code, _ = error(server, {"Action": "SendMessage", "QueueUrl": url, "MessageBody": "nul\x00"})
    assert code == "InvalidMessageContents"


def test_fifo_over_query_reports_sequence_numbers(server):
    url = create(server, "q.fifo", FifoQueue="true", ContentBasedDeduplication="true")
    root = ok(server, {"Action": "SendMessage", "QueueUrl": url, "MessageBody": "x", "MessageGroupId": "g"})
    first = root.find("q:SendMessageResult/q:SequenceNumber", NS).text
    root = ok(server, {"Action": "SendMessage", "QueueUrl": url, "MessageBody": "x", "MessageGroupId": "g"})
    assert root.find("q:SendMessageResult/q:SequenceNumber", NS).text == first


def test_delete_queue_over_query(server):
    url = create(server)
    ok(server, {"Action": "DeleteQueue", "QueueUrl": url})
    _, _, code, _ = error(server, {"Action": "GetQueueUrl", "QueueName": "jobs"})
    assert code == "AWS.SimpleQueueService.NonExistentQueue"
