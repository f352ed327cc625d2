"""The advanceable clock (/_roto/clock): it only moves forward, rejects bad input, and what
waits on it (scheduled EventBridge rules here) happens at once when it passes."""

from __future__ import annotations

import json

import pytest


def clock(server):
    status, _, body = server.request("GET", "/_roto/clock")
    assert status == 200
    return json.loads(body)


def test_advance_moves_the_clock_forward(server):
    before = clock(server)
    assert before["advanced_millis"] == 0
    after = server.advance_clock(3600)
    assert after["advanced_millis"] == 3_600_000
    assert after["now_millis"] - before["now_millis"] >= 3_600_000
    assert after["now"].endswith("Z")
    assert server.advance_clock(0.5)["advanced_millis"] == 3_600_500


@pytest.mark.parametrize("query", ["", "?advance=", "?advance=-5", "?advance=soon", "?advance=nan", "?advance=inf"])
def test_bad_advances_are_rejected_and_leave_the_clock(server, query):
    status, _, body = server.request("POST", f"/_roto/clock{query}")
    assert status == 400
    assert "advance" in json.loads(body)["error"]
    assert clock(server)["advanced_millis"] == 0


def test_advancing_fires_a_scheduled_rule(server, client):
    sqs, events = client("sqs"), client("events")
    url = sqs.create_queue(QueueName="ticks")["QueueUrl"]
    arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    events.put_rule(Name="every-hour", ScheduleExpression="rate(1 hour)")
    events.put_targets(Rule="every-hour", Targets=[{"Id": "q", "Arn": arn}])

    assert sqs.receive_message(QueueUrl=url, WaitTimeSeconds=1).get("Messages", []) == []
    server.advance_clock(3601)
    messages = sqs.receive_message(QueueUrl=url, WaitTimeSeconds=5).get("Messages", [])
    assert len(messages) == 1
    event = json.loads(messages[0]["Body"])
    assert event["source"] == "aws.events"
    assert event["detail-type"] == "Scheduled Event"
    assert event["resources"] == [events.describe_rule(Name="every-hour")["Arn"]]
