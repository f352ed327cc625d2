"""CloudFormation stack policies, black-box with boto3: set on creation, by SetStackPolicy
(body or S3 URL) and by UpdateStack, refused when invalid, and enforced on updates (a
modification, replacement or deletion the policy denies fails the update with AWS's reason
and rolls it back; StackPolicyDuringUpdateBody overrides it for one update)."""

from __future__ import annotations

import json

import pytest
from botocore.exceptions import ClientError

from test_cloudformation import error, events, settle, template

ALLOW_ALL = {"Effect": "Allow", "Action": "Update:*", "Principal": "*", "Resource": "*"}


def policy(*statements):
    return json.dumps({"Statement": list(statements)})


def resources(stack, value="one", queue="first", with_queue=True):
    """A parameter `/<stack>/p` holding `value` and a queue `<stack>-<queue>`."""
    r = {"P": {"Type": "AWS::SSM::Parameter", "Properties": {"Name": f"/{stack}/p", "Type": "String", "Value": value}}}
    if with_queue:
        r["Q"] = {"Type": "AWS::SQS::Queue", "Properties": {"QueueName": f"{stack}-{queue}"}}
    return template(r)


@pytest.fixture
def cfn(client):
    return client("cloudformation")


def create(cfn, name, **kwargs):
    cfn.create_stack(StackName=name, TemplateBody=resources(name), **kwargs)
    assert settle(cfn, name)["StackStatus"] == "CREATE_COMPLETE", events(cfn, name)


def failed_update(cfn, name, body, **kwargs):
    """The reasons of the resources whose update failed, once the update rolled back."""
    cfn.update_stack(StackName=name, TemplateBody=body, **kwargs)
    assert settle(cfn, name)["StackStatus"] == "UPDATE_ROLLBACK_COMPLETE", events(cfn, name)
    return {lid: reason for lid, status, reason in events(cfn, name) if status == "UPDATE_FAILED" and lid != name}


def test_policies_are_set_read_and_refused_as_aws_refuses_them(cfn, client):
    create(cfn, "plain")
    assert "StackPolicyBody" not in cfn.get_stack_policy(StackName="plain")
    body = policy(ALLOW_ALL)
    create(cfn, "sp-set", StackPolicyBody=body)
    assert cfn.get_stack_policy(StackName="sp-set")["StackPolicyBody"] == body
    cfn.set_stack_policy(StackName="sp-set", StackPolicyBody="{}")
    assert cfn.get_stack_policy(StackName="sp-set")["StackPolicyBody"] == "{}"

    s3 = client("s3")
    s3.create_bucket(Bucket="policies")
    deny = policy({**ALLOW_ALL, "Effect": "Deny"})
    s3.put_object(Bucket="policies", Key="deny.json", Body=deny.encode())
    s3.put_object(Bucket="policies", Key="bad.json", Body=b"not a policy")
    url = "https://policies.s3.amazonaws.com/deny.json"
    cfn.set_stack_policy(StackName="sp-set", StackPolicyURL=url)
    assert cfn.get_stack_policy(StackName="sp-set")["StackPolicyBody"] == deny

    invalid = "Error validating stack policy: Invalid stack policy"
    for bad in ["nope", policy({**ALLOW_ALL, "Principal": "me"}), policy({**ALLOW_ALL, "Action": "Delete:*"}),
                policy({**ALLOW_ALL, "Resource": "arn:aws:sqs:us-east-1:000000000000:q"})]:
        with pytest.raises(ClientError) as e:
            cfn.set_stack_policy(StackName="sp-set", StackPolicyBody=bad)
        assert (error(e)["Code"], error(e)["Message"]) == ("ValidationError", invalid)
    with pytest.raises(ClientError) as e:
        cfn.set_stack_policy(StackName="sp-set", StackPolicyURL="https://policies.s3.amazonaws.com/bad.json")
    assert error(e)["Message"] == invalid
    with pytest.raises(ClientError) as e:
        cfn.set_stack_policy(StackName="sp-set", StackPolicyBody=body, StackPolicyURL=url)
    assert error(e)["Message"] == "You cannot specify both StackPolicyURL and StackPolicyBody"
    with pytest.raises(ClientError) as e:
        cfn.create_stack(StackName="sp-bad", TemplateBody=resources("sp-bad"), StackPolicyBody="[]")
    assert error(e)["Message"] == invalid
    with pytest.raises(ClientError) as e:
        cfn.set_stack_policy(StackName="nothing-here", StackPolicyBody=body)
    assert error(e)["Message"] == "Stack with id nothing-here does not exist"


def test_a_denied_modification_fails_the_update_and_an_override_lets_it_through(cfn, client):
    deny_p = {"Effect": "Deny", "Action": "Update:Modify", "Principal": "*", "Resource": "LogicalResourceId/P"}
    create(cfn, "sp-mod", StackPolicyBody=policy(ALLOW_ALL, deny_p))
    reasons = failed_update(cfn, "sp-mod", resources("sp-mod", "two"))
    assert reasons == {"P": "Action denied by stack policy: Statement [#1] does not allow [Update:Modify] for resource [LogicalResourceId/P]"}
    ssm = client("ssm")
    assert ssm.get_parameter(Name="/sp-mod/p")["Parameter"]["Value"] == "one"

    cfn.update_stack(StackName="sp-mod", TemplateBody=resources("sp-mod", "two"), StackPolicyDuringUpdateBody=policy(ALLOW_ALL))
    assert settle(cfn, "sp-mod")["StackStatus"] == "UPDATE_COMPLETE", events(cfn, "sp-mod")
    assert ssm.get_parameter(Name="/sp-mod/p")["Parameter"]["Value"] == "two"
    assert json.loads(cfn.get_stack_policy(StackName="sp-mod")["StackPolicyBody"])["Statement"][1] == deny_p

    cfn.update_stack(StackName="sp-mod", TemplateBody=resources("sp-mod", "three"), StackPolicyBody=policy(ALLOW_ALL))
    assert settle(cfn, "sp-mod")["StackStatus"] == "UPDATE_ROLLBACK_COMPLETE"
    cfn.update_stack(StackName="sp-mod", TemplateBody=resources("sp-mod", "three"))
    assert settle(cfn, "sp-mod")["StackStatus"] == "UPDATE_COMPLETE", events(cfn, "sp-mod")
    assert json.loads(cfn.get_stack_policy(StackName="sp-mod")["StackPolicyBody"]) == {"Statement": [ALLOW_ALL]}


def test_replacements_and_deletions_are_denied_by_resource_type(cfn, client):
    deny_queues = {"Effect": "Deny", "Action": ["Update:Replace", "Update:Delete"], "Principal": "*",
                   "Resource": "*", "Condition": {"StringEquals": {"ResourceType": ["AWS::SQS::Queue"]}}}
    create(cfn, "sp-type", StackPolicyBody=policy(ALLOW_ALL, deny_queues))
    reasons = failed_update(cfn, "sp-type", resources("sp-type", queue="second"))
    assert reasons["Q"] == "Action denied by stack policy: Statement [#1] does not allow [Update:Replace] for resource [LogicalResourceId/Q]"
    reasons = failed_update(cfn, "sp-type", resources("sp-type", "two", with_queue=False))
    assert reasons == {"Q": "Action denied by stack policy: Statement [#1] does not allow [Update:Delete] for resource [LogicalResourceId/Q]"}
    sqs = client("sqs")
    sqs.get_queue_url(QueueName="sp-type-first")
    assert client("ssm").get_parameter(Name="/sp-type/p")["Parameter"]["Value"] == "one"

    cfn.update_stack(StackName="sp-type", TemplateBody=resources("sp-type", "two"))
    assert settle(cfn, "sp-type")["StackStatus"] == "UPDATE_COMPLETE"


def test_an_empty_policy_protects_everything_and_change_sets_obey_it(cfn, client):
    create(cfn, "sp-empty", StackPolicyBody="{}")
    reasons = failed_update(cfn, "sp-empty", resources("sp-empty", "two"))
    assert reasons == {"P": "Action not allowed by stack policy: no statement allows [Update:Modify] for resource [LogicalResourceId/P]"}
    cs = cfn.create_change_set(StackName="sp-empty", ChangeSetName="cs", TemplateBody=resources("sp-empty", "two"))
    cfn.get_waiter("change_set_create_complete").wait(ChangeSetName=cs["Id"], WaiterConfig={"Delay": 1})
    cfn.execute_change_set(ChangeSetName=cs["Id"])
    assert settle(cfn, "sp-empty")["StackStatus"] == "UPDATE_ROLLBACK_COMPLETE"
    assert cfn.get_stack_policy(StackName="sp-empty")["StackPolicyBody"] == "{}"
