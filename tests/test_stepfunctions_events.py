"""Step Functions' execution status changes as EventBridge events: a rule on the default
bus matching `aws.states` receives each STANDARD execution's RUNNING and closing status in
AWS's shape; EXPRESS executions send none. Executions started by an EventBridge rule and by
an API Gateway AWS integration."""

from __future__ import annotations

import http.client
import json
import time

import pytest
from botocore.config import Config

from sfn_helpers import finish, machine

PATTERN = json.dumps({"source": ["aws.states"], "detail-type": ["Step Functions Execution Status Change"]})


@pytest.fixture
def sfn(client):
    return client("stepfunctions")


def status_queue(client):
    sqs, events = client("sqs"), client("events")
    url = sqs.create_queue(QueueName="status")["QueueUrl"]
    arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    events.put_rule(Name="sfn-status", EventPattern=PATTERN)
    events.put_targets(Rule="sfn-status", Targets=[{"Id": "q", "Arn": arn}])
    return sqs, url


def received(sqs, url, count, timeout=10):
    bodies, deadline = [], time.time() + timeout
    while len(bodies) < count and time.time() < deadline:
        for m in sqs.receive_message(QueueUrl=url, WaitTimeSeconds=1, MaxNumberOfMessages=10).get("Messages", []):
            bodies.append(json.loads(m["Body"]))
    return bodies


def test_status_changes_reach_an_eventbridge_rule(client, sfn):
    sqs, url = status_queue(client)
    ok = machine(sfn, {"A": {"Type": "Pass", "End": True}}, name="ok")
    bad = machine(sfn, {"F": {"Type": "Fail", "Error": "Boom", "Cause": "why"}}, name="bad")
    slow = machine(sfn, {"W": {"Type": "Wait", "Seconds": 3600, "End": True}}, name="slow")
    express = sfn.create_state_machine(name="x", type="EXPRESS", roleArn="arn:aws:iam::000000000000:role/sfn",
                                       definition=json.dumps({"StartAt": "A", "States": {"A": {"Type": "Pass", "End": True}}}))
    sync = client("stepfunctions", config=Config(inject_host_prefix=False))
    sync.start_sync_execution(stateMachineArn=express["stateMachineArn"], input="{}")
    first = sfn.start_execution(stateMachineArn=ok, name="one", input='{"k": 1}')["executionArn"]
    finish(sfn, first)
    second = sfn.start_execution(stateMachineArn=bad, name="two")["executionArn"]
    finish(sfn, second)
    third = sfn.start_execution(stateMachineArn=slow, name="three")["executionArn"]
    sfn.stop_execution(executionArn=third, error="E", cause="stopped")
    events = received(sqs, url, 6)
    seen = sorted((e["detail"]["name"], e["detail"]["status"]) for e in events)
    assert seen == [("one", "RUNNING"), ("one", "SUCCEEDED"), ("three", "ABORTED"), ("three", "RUNNING"),
                    ("two", "FAILED"), ("two", "RUNNING")]
    done = next(e for e in events if e["detail"]["status"] == "SUCCEEDED")
    assert done["source"] == "aws.states" and done["detail-type"] == "Step Functions Execution Status Change"
    assert done["resources"] == [first] and done["account"] == "000000000000" and done["region"] == "us-east-1"
    d = done["detail"]
    assert d["executionArn"] == first and d["stateMachineArn"] == ok and d["input"] == '{"k": 1}'
    assert json.loads(d["output"]) == {"k": 1} and d["outputDetails"] == {"included": True}
    assert isinstance(d["startDate"], int) and d["stopDate"] >= d["startDate"] and d["error"] is None
    failed = next(e for e in events if e["detail"]["status"] == "FAILED")["detail"]
    assert (failed["error"], failed["cause"], failed["output"]) == ("Boom", "why", None)
    aborted = next(e for e in events if e["detail"]["status"] == "ABORTED")["detail"]
    assert (aborted["error"], aborted["cause"]) == ("E", "stopped")
    running = next(e for e in events if e["detail"]["status"] == "RUNNING")["detail"]
    assert running["stopDate"] is None and running["redriveCount"] == 0


def test_an_eventbridge_rule_starts_an_execution(client, sfn, server):
    arn = machine(sfn, {"A": {"Type": "Pass", "Parameters": {"got.$": "$.detail.order"}, "End": True}}, name="onorder")
    events = client("events")
    events.put_rule(Name="orders", EventPattern=json.dumps({"source": ["shop"]}))
    events.put_targets(Rule="orders", Targets=[{"Id": "sfn", "Arn": arn, "RoleArn": "arn:aws:iam::000000000000:role/r"}])
    events.put_events(Entries=[{"Source": "shop", "DetailType": "Order", "Detail": json.dumps({"order": 7})}])
    deadline, started = time.time() + 10, []
    while not started and time.time() < deadline:
        started = sfn.list_executions(stateMachineArn=arn)["executions"]
        time.sleep(0.02)
    assert len(started) == 1
    described = finish(sfn, started[0]["executionArn"])
    assert json.loads(described["output"]) == {"got": 7}


def test_an_api_gateway_aws_integration_starts_an_execution(client, sfn, server):
    arn = machine(sfn, {"A": {"Type": "Pass", "Parameters": {"got.$": "$.order"}, "End": True}}, name="fromapi")
    apigw = client("apigateway")
    api = apigw.create_rest_api(name="orders")
    resource = apigw.create_resource(restApiId=api["id"], parentId=api["rootResourceId"], pathPart="orders")
    ids = {"restApiId": api["id"], "resourceId": resource["id"], "httpMethod": "POST"}
    apigw.put_method(**ids, authorizationType="NONE")
    template = '{"stateMachineArn": "%s", "input": "$util.escapeJavaScript($input.body)"}' % arn
    apigw.put_integration(**ids, type="AWS", integrationHttpMethod="POST",
                          uri="arn:aws:apigateway:us-east-1:states:action/StartExecution",
                          requestTemplates={"application/json": template})
    apigw.put_method_response(**ids, statusCode="200")
    apigw.put_integration_response(**ids, statusCode="200")
    apigw.create_deployment(restApiId=api["id"], stageName="prod")
    conn = http.client.HTTPConnection(server.host, server.port, timeout=30)
    conn.request("POST", "/prod/orders", body=b'{"order": 9}',
                 headers={"Host": f"{api['id']}.execute-api.localhost", "Content-Type": "application/json"})
    resp = conn.getresponse()
    body = json.loads(resp.read())
    conn.close()
    assert resp.status == 200 and body["executionArn"].startswith(arn.replace(":stateMachine:", ":execution:"))
    described = finish(sfn, body["executionArn"])
    assert json.loads(described["output"]) == {"got": 9}
