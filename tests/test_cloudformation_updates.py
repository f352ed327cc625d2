"""CloudFormation's control over running updates and stack names, black-box with boto3:
CancelUpdateStack (the resources in flight cancelled, the stack rolled back),
ContinueUpdateRollback (a failed rollback resumed, resources skipped), SetAlias and
RemoveAlias. A custom resource whose provider the test answers (SNS to SQS, then a PUT to
the presigned ResponseURL) keeps an update in flight as long as the test wants."""

from __future__ import annotations

import json
import time
import urllib.request

import pytest
from botocore.exceptions import ClientError


@pytest.fixture
def cfn(client):
    return client("cloudformation")


def error(excinfo):
    err = excinfo.value.response["Error"]
    return err["Code"], err["Message"]


def settle(cfn, name, timeout=30):
    deadline = time.time() + timeout
    while (stack := cfn.describe_stacks(StackName=name)["Stacks"][0])["StackStatus"].endswith("_IN_PROGRESS"):
        assert time.time() < deadline, stack["StackStatus"]
        time.sleep(0.05)
    return stack


def wait_for(cfn, name, status, timeout=30):
    deadline = time.time() + timeout
    while (stack := cfn.describe_stacks(StackName=name)["Stacks"][0])["StackStatus"] != status:
        assert time.time() < deadline, stack["StackStatus"]
        time.sleep(0.05)
    return stack


def events(cfn, name):
    return [(e["LogicalResourceId"], e["ResourceStatus"], e.get("ResourceStatusReason"))
            for e in reversed(cfn.describe_stack_events(StackName=name)["StackEvents"])]


def template(resources):
    return json.dumps({"Resources": resources})


class Provider:
    """A custom resource provider the test drives: requests arrive on a queue through a
    topic, answers go to each request's ResponseURL."""

    def __init__(self, client, name):
        self.sns, self.sqs = client("sns"), client("sqs")
        self.topic = self.sns.create_topic(Name=name)["TopicArn"]
        self.queue = self.sqs.create_queue(QueueName=f"{name}-requests")["QueueUrl"]
        arn = self.sqs.get_queue_attributes(QueueUrl=self.queue, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
        self.sns.subscribe(TopicArn=self.topic, Protocol="sqs", Endpoint=arn, Attributes={"RawMessageDelivery": "true"})

    def resource(self, value):
        return {"Type": "Custom::Driven", "Properties": {"ServiceToken": self.topic, "Value": value}}

    def requests(self, count):
        found = []
        deadline = time.time() + 15
        while len(found) < count and time.time() < deadline:
            for m in self.sqs.receive_message(QueueUrl=self.queue, WaitTimeSeconds=1, MaxNumberOfMessages=10).get("Messages", []):
                self.sqs.delete_message(QueueUrl=self.queue, ReceiptHandle=m["ReceiptHandle"])
                found.append(json.loads(m["Body"]))
        assert len(found) == count, found
        return sorted(found, key=lambda r: r["LogicalResourceId"])

    @staticmethod
    def answer(request, status="SUCCESS", reason=None):
        body = {"Status": status, "PhysicalResourceId": f"driven-{request['LogicalResourceId']}",
                "StackId": request["StackId"], "RequestId": request["RequestId"],
                "LogicalResourceId": request["LogicalResourceId"]}
        if reason:
            body["Reason"] = reason
        put = urllib.request.Request(request["ResponseURL"], data=json.dumps(body).encode(), method="PUT",
                                     headers={"Content-Type": ""})
        urllib.request.urlopen(put).read()


def test_cancel_update_fails_the_resources_in_flight_and_rolls_the_stack_back(cfn, client):
    provider = Provider(client, "cancel-provider")
    ssm = client("ssm")
    param = {"Type": "AWS::SSM::Parameter", "Properties": {"Name": "/cancel/p", "Type": "String", "Value": "one"}}
    cfn.create_stack(StackName="cancel", TemplateBody=template({"P": param, "C": provider.resource("v1")}))
    [create] = provider.requests(1)
    provider.answer(create)
    assert settle(cfn, "cancel")["StackStatus"] == "CREATE_COMPLETE"

    param["Properties"]["Value"] = "two"
    cfn.update_stack(StackName="cancel", TemplateBody=template(
        {"P": param, "C": provider.resource("v2"), "D": provider.resource("new")}))
    update_c, create_d = provider.requests(2)
    assert (update_c["RequestType"], create_d["RequestType"]) == ("Update", "Create")
    deadline = time.time() + 10
    while ssm.get_parameter(Name="/cancel/p")["Parameter"]["Value"] != "two":
        assert time.time() < deadline
        time.sleep(0.05)
    assert cfn.describe_stacks(StackName="cancel")["Stacks"][0]["StackStatus"] == "UPDATE_IN_PROGRESS"
    assert cfn.cancel_update_stack(StackName="cancel")["ResponseMetadata"]["HTTPStatusCode"] == 200

    [rollback] = provider.requests(1)
    assert (rollback["RequestType"], rollback["LogicalResourceId"]) == ("Update", "C")
    assert rollback["ResourceProperties"]["Value"] == "v1"
    provider.answer(rollback)
    stack = settle(cfn, "cancel")
    assert stack["StackStatus"] == "UPDATE_ROLLBACK_COMPLETE", events(cfn, "cancel")
    assert ssm.get_parameter(Name="/cancel/p")["Parameter"]["Value"] == "one"
    seen = events(cfn, "cancel")
    assert ("C", "UPDATE_FAILED", "Resource update cancelled") in seen
    assert ("D", "CREATE_FAILED", "Resource creation cancelled") in seen
    assert ("cancel", "UPDATE_ROLLBACK_IN_PROGRESS", "Stack update cancelled") in seen
    stack_statuses = [s for lid, s, _ in seen if lid == "cancel"]
    assert stack_statuses[-4:] == ["UPDATE_IN_PROGRESS", "UPDATE_ROLLBACK_IN_PROGRESS",
                                   "UPDATE_ROLLBACK_COMPLETE_CLEANUP_IN_PROGRESS", "UPDATE_ROLLBACK_COMPLETE"]
    resources = {r["LogicalResourceId"]: r["ResourceStatus"]
                 for r in cfn.describe_stack_resources(StackName="cancel")["StackResources"]}
    assert set(resources) == {"P", "C"}

    with pytest.raises(ClientError) as e:
        cfn.cancel_update_stack(StackName="cancel")
    assert error(e) == ("ValidationError", "CancelUpdateStack cannot be called from current stack status")
    with pytest.raises(ClientError) as e:
        cfn.cancel_update_stack(StackName="missing")
    assert error(e) == ("ValidationError", "Stack with id missing does not exist")


def test_continue_update_rollback_retries_skips_and_forces(cfn, client):
    provider = Provider(client, "continue-provider")
    bad = {"Type": "AWS::SQS::Queue", "DependsOn": "C", "Properties": {"QueueName": "continue-bad", "MaximumMessageSize": 1}}
    cfn.create_stack(StackName="cont", TemplateBody=template({"C": provider.resource("v1")}))
    provider.answer(provider.requests(1)[0])
    assert settle(cfn, "cont")["StackStatus"] == "CREATE_COMPLETE"
    with pytest.raises(ClientError) as e:
        cfn.continue_update_rollback(StackName="cont")
    assert error(e) == ("ValidationError", "ContinueUpdateRollback cannot be called from current stack status")

    def failed_rollback(value):
        cfn.update_stack(StackName="cont", TemplateBody=template({"C": provider.resource(value), "Bad": bad}))
        provider.answer(provider.requests(1)[0])
        [rollback] = provider.requests(1)
        assert rollback["ResourceProperties"]["Value"] == "v1"
        provider.answer(rollback, "FAILED", "the old value cannot come back")
        assert settle(cfn, "cont")["StackStatus"] == "UPDATE_ROLLBACK_FAILED", events(cfn, "cont")

    failed_rollback("v2")
    resource = cfn.describe_stack_resource(StackName="cont", LogicalResourceId="C")["StackResourceDetail"]
    assert resource["ResourceStatus"] == "UPDATE_FAILED"
    assert "the old value cannot come back" in resource["ResourceStatusReason"]
    with pytest.raises(ClientError) as e:
        cfn.update_stack(StackName="cont", TemplateBody=template({"C": provider.resource("v3")}))
    assert error(e)[0] == "ValidationError" and "UPDATE_ROLLBACK_FAILED state and can not be updated" in error(e)[1]
    with pytest.raises(ClientError) as e:
        cfn.continue_update_rollback(StackName="cont", ResourcesToSkip=["C"], ForceRollback=True)
    assert error(e)[0] == "ValidationError"
    with pytest.raises(ClientError) as e:
        cfn.continue_update_rollback(StackName="cont", ResourcesToSkip=["Nope"])
    assert error(e)[0] == "ValidationError" and "[Nope]" in error(e)[1]

    cfn.continue_update_rollback(StackName="cont")
    [retry] = provider.requests(1)
    provider.answer(retry, "FAILED", "still not")
    assert settle(cfn, "cont")["StackStatus"] == "UPDATE_ROLLBACK_FAILED"

    cfn.continue_update_rollback(StackName="cont", ResourcesToSkip=["C"])
    assert settle(cfn, "cont")["StackStatus"] == "UPDATE_ROLLBACK_COMPLETE", events(cfn, "cont")
    resources = {r["LogicalResourceId"]: r["ResourceStatus"]
                 for r in cfn.describe_stack_resources(StackName="cont")["StackResources"]}
    assert resources == {"C": "UPDATE_COMPLETE"}
    assert cfn.get_template(StackName="cont")["TemplateBody"]["Resources"]["C"]["Properties"]["Value"] == "v1"

    failed_rollback("v4")
    cfn.continue_update_rollback(StackName="cont", ForceRollback=True)
    assert settle(cfn, "cont")["StackStatus"] == "UPDATE_ROLLBACK_COMPLETE", events(cfn, "cont")
    with pytest.raises(ClientError) as e:
        cfn.continue_update_rollback(StackName="missing")
    assert error(e) == ("ValidationError", "Stack with id missing does not exist")


def test_an_alias_names_the_stack_everywhere_until_removed(cfn):
    queue = template({"Q": {"Type": "AWS::SQS::Queue", "Properties": {}}})
    for name in ("orig", "second"):
        cfn.create_stack(StackName=name, TemplateBody=queue)
        assert settle(cfn, name)["StackStatus"] == "CREATE_COMPLETE"
    cfn.set_alias(StackName="orig", AliasName="nick-1")
    [stack] = cfn.describe_stacks(StackName="nick-1")["Stacks"]
    assert (stack["StackName"], stack["AliasName"]) == ("orig", "nick-1")
    assert cfn.describe_stack_resource(StackName="nick-1", LogicalResourceId="Q")["StackResourceDetail"]["StackName"] == "orig"
    cfn.update_stack(StackName="nick-1", TemplateBody=template({"Q": {"Type": "AWS::SQS::Queue", "Properties": {"DelaySeconds": 1}}}))
    assert settle(cfn, "orig")["StackStatus"] == "UPDATE_COMPLETE"

    for stack_name, alias, code in [("orig", "other", "LimitExceededException"),
                                    ("second", "nick-1", "AlreadyExistsException"),
                                    ("second", "orig", "AlreadyExistsException"),
                                    ("second", "9-starts-with-a-digit", "ValidationError"),
                                    ("second", "under_score", "ValidationError"),
                                    ("missing", "fine", "ValidationError")]:
        with pytest.raises(ClientError) as e:
            cfn.set_alias(StackName=stack_name, AliasName=alias)
        assert error(e)[0] == code, (stack_name, alias)
    with pytest.raises(ClientError) as e:
        cfn.create_stack(StackName="nick-1", TemplateBody=queue)
    assert error(e)[0] == "AlreadyExistsException"

    cfn.remove_alias(AliasName="nick-1")
    assert "AliasName" not in cfn.describe_stacks(StackName="orig")["Stacks"][0]
    with pytest.raises(ClientError) as e:
        cfn.describe_stacks(StackName="nick-1")
    assert error(e) == ("ValidationError", "Stack with id nick-1 does not exist")
    with pytest.raises(ClientError) as e:
        cfn.remove_alias(AliasName="nick-1")
    assert error(e)[0] == "ValidationError"
    cfn.set_alias(StackName="second", AliasName="nick-1")
    assert cfn.describe_stacks(StackName="nick-1")["Stacks"][0]["StackName"] == "second"
