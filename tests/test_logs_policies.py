"""CloudWatch Logs destinations and resource policies: stored and described as AWS keeps them,
with AWS's limits, pagination and errors."""

from __future__ import annotations

import json

import pytest
from botocore.exceptions import ClientError

ACCOUNT = "000000000000"
STREAM = f"arn:aws:kinesis:us-east-1:{ACCOUNT}:stream/logs"
ROLE = f"arn:aws:iam::{ACCOUNT}:role/cwl-to-kinesis"
POLICY = json.dumps({
    "Version": "2012-10-17",
    "Statement": [{"Effect": "Allow", "Principal": {"Service": "route53.amazonaws.com"},
                   "Action": "logs:PutLogEvents", "Resource": "*"}],
})


@pytest.fixture
def logs(client):
    return client("logs")


def error_of(excinfo) -> tuple[str, str]:
    err = excinfo.value.response["Error"]
    return err["Code"], err["Message"]


def test_put_destination_then_policy_then_describe_and_delete(logs):
    created = logs.put_destination(destinationName="central", targetArn=STREAM, roleArn=ROLE)["destination"]
    assert created["destinationName"] == "central"
    assert created["arn"] == f"arn:aws:logs:us-east-1:{ACCOUNT}:destination:central"
    assert created["targetArn"] == STREAM
    assert created["roleArn"] == ROLE
    assert "accessPolicy" not in created
    assert created["creationTime"] > 0

    logs.put_destination_policy(destinationName="central", accessPolicy=POLICY)
    (described,) = logs.describe_destinations()["destinations"]
    assert described["accessPolicy"] == POLICY

    other_role = f"arn:aws:iam::{ACCOUNT}:role/other"
    updated = logs.put_destination(destinationName="central", targetArn=STREAM, roleArn=other_role)["destination"]
    assert updated["roleArn"] == other_role
    assert updated["creationTime"] == created["creationTime"]
    assert updated["accessPolicy"] == POLICY

    logs.delete_destination(destinationName="central")
    assert logs.describe_destinations()["destinations"] == []


def test_describe_destinations_filters_by_prefix_and_paginates(logs):
    names = [f"dest-{i}" for i in range(5)] + ["other"]
    for name in names:
        logs.put_destination(destinationName=name, targetArn=STREAM, roleArn=ROLE)
    page = logs.describe_destinations(DestinationNamePrefix="dest-", limit=2)
    assert [d["destinationName"] for d in page["destinations"]] == ["dest-0", "dest-1"]
    rest = logs.get_paginator("describe_destinations").paginate(
        DestinationNamePrefix="dest-", PaginationConfig={"PageSize": 2})
    assert [d["destinationName"] for p in rest for d in p["destinations"]] == names[:5]


def test_destination_tags_through_the_resource_tag_apis(logs):
    arn = logs.put_destination(
        destinationName="tagged", targetArn=STREAM, roleArn=ROLE, tags={"team": "core"},
    )["destination"]["arn"]
    assert logs.list_tags_for_resource(resourceArn=arn)["tags"] == {"team": "core"}
    logs.tag_resource(resourceArn=arn, tags={"env": "dev"})
    logs.untag_resource(resourceArn=arn, tagKeys=["team"])
    assert logs.list_tags_for_resource(resourceArn=arn)["tags"] == {"env": "dev"}
    logs.put_destination(destinationName="tagged", targetArn=STREAM, roleArn=ROLE)
    assert logs.list_tags_for_resource(resourceArn=arn)["tags"] == {"env": "dev"}
    with pytest.raises(ClientError) as e:
        logs.list_tags_for_resource(resourceArn=f"arn:aws:logs:us-east-1:{ACCOUNT}:destination:nope")
    assert error_of(e) == ("ResourceNotFoundException", "The specified destination does not exist.")


def test_destination_errors_are_the_real_ones(logs):
    with pytest.raises(ClientError) as e:
        logs.put_destination_policy(destinationName="missing", accessPolicy=POLICY)
    assert error_of(e) == ("ResourceNotFoundException", "The specified destination does not exist.")
    with pytest.raises(ClientError) as e:
        logs.delete_destination(destinationName="missing")
    assert error_of(e) == ("ResourceNotFoundException", "The specified destination does not exist.")
    with pytest.raises(ClientError) as e:
        logs.put_destination(destinationName="bad:name", targetArn=STREAM, roleArn=ROLE)
    assert error_of(e)[0] == "InvalidParameterException"
    assert "at 'destinationName' failed to satisfy constraint" in error_of(e)[1]
    with pytest.raises(ClientError) as e:
        logs.put_destination(destinationName="d", targetArn="not-an-arn", roleArn=ROLE)
    assert error_of(e)[0] == "InvalidParameterException"
    logs.put_destination(destinationName="d", targetArn=STREAM, roleArn=ROLE)
    with pytest.raises(ClientError) as e:
        logs.put_destination_policy(destinationName="d", accessPolicy="{not json")
    assert error_of(e)[0] == "InvalidParameterException"
    with pytest.raises(ClientError) as e:
        logs.describe_destinations(limit=51)
    assert error_of(e)[0] == "InvalidParameterException"


def test_account_resource_policies_are_named_replaced_and_limited_to_ten(logs):
    put = logs.put_resource_policy(policyName="route53", policyDocument=POLICY)["resourcePolicy"]
    assert put["policyName"] == "route53"
    assert put["policyDocument"] == POLICY
    assert put["policyScope"] == "ACCOUNT"
    assert put["lastUpdatedTime"] > 0
    assert "revisionId" not in put
    for i in range(9):
        logs.put_resource_policy(policyName=f"p{i}", policyDocument=POLICY)
    with pytest.raises(ClientError) as e:
        logs.put_resource_policy(policyName="eleventh", policyDocument=POLICY)
    assert error_of(e) == ("LimitExceededException", "Resource limit exceeded.")
    replaced = json.dumps({"Version": "2012-10-17", "Statement": []})
    logs.put_resource_policy(policyName="route53", policyDocument=replaced)
    policies = logs.describe_resource_policies()["resourcePolicies"]
    assert len(policies) == 10
    assert {p["policyName"]: p["policyDocument"] for p in policies}["route53"] == replaced
    first = logs.describe_resource_policies(limit=4)
    second = logs.describe_resource_policies(limit=50, nextToken=first["nextToken"])
    assert len(first["resourcePolicies"]) == 4 and len(second["resourcePolicies"]) == 6
    assert "nextToken" not in second

    logs.delete_resource_policy(policyName="route53")
    with pytest.raises(ClientError) as e:
        logs.delete_resource_policy(policyName="route53")
    assert error_of(e) == ("ResourceNotFoundException", "Policy with name [route53] does not exist")


def test_log_group_resource_policy_is_guarded_by_its_revision(logs):
    logs.create_log_group(logGroupName="/app")
    arn = logs.describe_log_groups()["logGroups"][0]["logGroupArn"]
    first = logs.put_resource_policy(policyName="app", policyDocument=POLICY, resourceArn=arn)
    assert first["resourcePolicy"]["policyScope"] == "RESOURCE"
    assert first["resourcePolicy"]["resourceArn"] == arn
    revision = first["revisionId"]
    assert first["resourcePolicy"]["revisionId"] == revision

    with pytest.raises(ClientError) as e:
        logs.put_resource_policy(policyName="app", policyDocument=POLICY, resourceArn=arn)
    assert error_of(e)[0] == "OperationAbortedException"
    with pytest.raises(ClientError) as e:
        logs.put_resource_policy(policyName="app", policyDocument=POLICY, resourceArn=arn,
                                 expectedRevisionId="stale")
    assert error_of(e)[0] == "OperationAbortedException"
    second = logs.put_resource_policy(policyName="app", policyDocument=POLICY, resourceArn=arn,
                                      expectedRevisionId=revision)
    assert second["revisionId"] != revision

    assert logs.describe_resource_policies()["resourcePolicies"] == []
    (scoped,) = logs.describe_resource_policies(resourceArn=arn)["resourcePolicies"]
    assert scoped["revisionId"] == second["revisionId"]
    assert len(logs.describe_resource_policies(policyScope="RESOURCE")["resourcePolicies"]) == 1

    logs.delete_log_group(logGroupName="/app")
    logs.create_log_group(logGroupName="/app")
    assert logs.describe_resource_policies(resourceArn=arn)["resourcePolicies"] == []


def test_resource_policy_errors_are_the_real_ones(logs):
    missing_group = f"arn:aws:logs:us-east-1:{ACCOUNT}:log-group:/missing"
    with pytest.raises(ClientError) as e:
        logs.put_resource_policy(policyName="p", policyDocument=POLICY, resourceArn=missing_group)
    assert error_of(e) == ("ResourceNotFoundException", "The specified log group does not exist.")
    with pytest.raises(ClientError) as e:
        logs.put_resource_policy(policyName="p", policyDocument="[1, 2")
    assert error_of(e)[0] == "InvalidParameterException"
    with pytest.raises(ClientError) as e:
        logs.put_resource_policy(policyDocument=POLICY)
    assert error_of(e)[0] == "InvalidParameterException"
    with pytest.raises(ClientError) as e:
        logs.put_resource_policy(policyName="p")
    assert error_of(e)[0] == "InvalidParameterException"
    with pytest.raises(ClientError) as e:
        logs.delete_resource_policy(resourceArn=missing_group)
    assert error_of(e)[0] == "ResourceNotFoundException"
