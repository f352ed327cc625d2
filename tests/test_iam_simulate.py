"""IAM's policy simulator and context-key listings through boto3: SimulateCustomPolicy,
SimulatePrincipalPolicy, GetContextKeysForCustomPolicy, GetContextKeysForPrincipalPolicy."""

from __future__ import annotations

import json

import pytest
from botocore.exceptions import ClientError

ACCOUNT = "000000000000"


def error_of(excinfo):
    err = excinfo.value.response
    return err["Error"]["Code"], err["Error"]["Message"], err["ResponseMetadata"]["HTTPStatusCode"]


@pytest.fixture
def iam(client):
    return client("iam")


def doc(*statements, indent=None):
    return json.dumps({"Version": "2012-10-17", "Statement": list(statements)}, indent=indent)


def allow(action, resource="*", **extra):
    return {"Effect": "Allow", "Action": action, "Resource": resource, **extra}


def deny(action, resource="*", **extra):
    return {"Effect": "Deny", "Action": action, "Resource": resource, **extra}


def decisions(response):
    return {(r["EvalActionName"], r["EvalResourceName"]): r["EvalDecision"] for r in response["EvaluationResults"]}


# SimulateCustomPolicy

def test_allow_implicit_deny_and_explicit_deny(iam):
    policy = doc(allow("s3:*", "arn:aws:s3:::data/*"), deny("s3:DeleteObject", "arn:aws:s3:::data/*"))
    out = iam.simulate_custom_policy(PolicyInputList=[policy],
                                     ActionNames=["s3:GetObject", "s3:DeleteObject", "sqs:SendMessage"],
                                     ResourceArns=["arn:aws:s3:::data/report.csv"])
    resource = "arn:aws:s3:::data/report.csv"
    assert decisions(out) == {("s3:GetObject", resource): "allowed", ("s3:DeleteObject", resource): "explicitDeny",
                              ("sqs:SendMessage", resource): "implicitDeny"}
    by_action = {r["EvalActionName"]: r for r in out["EvaluationResults"]}
    assert by_action["sqs:SendMessage"]["MatchedStatements"] == []
    assert [m["SourcePolicyId"] for m in by_action["s3:DeleteObject"]["MatchedStatements"]] == ["PolicyInputList.1"]
    specific = by_action["s3:GetObject"]["ResourceSpecificResults"]
    assert [(s["EvalResourceName"], s["EvalResourceDecision"]) for s in specific] == [(resource, "allowed")]


def test_matched_statements_carry_their_positions(iam):
    policy = doc(allow("s3:GetObject", ["arn:aws:s3:::b"]))
    out = iam.simulate_custom_policy(PolicyInputList=[policy], ActionNames=["s3:GetObject"],
                                     ResourceArns=["arn:aws:s3:::b"])
    statement = out["EvaluationResults"][0]["MatchedStatements"][0]
    start = policy.index("[{") + 1
    assert statement["SourcePolicyId"] == "PolicyInputList.1"
    assert statement["SourcePolicyType"] == "IAM Policy"
    assert statement["StartPosition"] == {"Line": 1, "Column": start + 1}
    assert statement["EndPosition"] == {"Line": 1, "Column": policy.rindex("}]") + 1}
    pretty = doc(deny("*"), allow("s3:*"), indent=2)
    out = iam.simulate_custom_policy(PolicyInputList=[pretty], ActionNames=["s3:GetObject"])
    statement = out["EvaluationResults"][0]["MatchedStatements"][0]
    lines = pretty.splitlines()
    first = next(i for i, line in enumerate(lines) if line.strip() == "{" and i > 0)
    assert statement["StartPosition"] == {"Line": first + 1, "Column": lines[first].index("{") + 1}
    close = next(i for i in range(first, len(lines)) if lines[i].strip().startswith("}"))
    assert statement["EndPosition"] == {"Line": close + 1, "Column": lines[close].index("}") + 1}


def test_not_action_not_resource_and_wildcards(iam):
    policy = doc({"Effect": "Allow", "NotAction": "iam:*", "NotResource": "arn:aws:s3:::secret*"})
    out = iam.simulate_custom_policy(PolicyInputList=[policy], ActionNames=["s3:GetObject", "IAM:CreateUser"],
                                     ResourceArns=["arn:aws:s3:::public/x", "arn:aws:s3:::secret-bucket/x"])
    assert decisions(out) == {
        ("s3:GetObject", "arn:aws:s3:::public/x"): "allowed",
        ("s3:GetObject", "arn:aws:s3:::secret-bucket/x"): "implicitDeny",
        ("IAM:CreateUser", "arn:aws:s3:::public/x"): "implicitDeny",
        ("IAM:CreateUser", "arn:aws:s3:::secret-bucket/x"): "implicitDeny",
    }


def test_conditions_against_context_entries_and_missing_values(iam):
    policy = doc(allow("dynamodb:*", Condition={"DateGreaterThan": {"aws:CurrentTime": "2018-08-16T12:00:00Z"}}))
    later = [{"ContextKeyName": "aws:CurrentTime", "ContextKeyValues": ["2019-04-25T11:00:00Z"], "ContextKeyType": "date"}]
    earlier = [{"ContextKeyName": "aws:CurrentTime", "ContextKeyValues": ["2014-04-25T11:00:00Z"], "ContextKeyType": "date"}]
    result = iam.simulate_custom_policy(PolicyInputList=[policy], ActionNames=["dynamodb:CreateBackup"],
                                        ContextEntries=later)["EvaluationResults"][0]
    assert (result["EvalDecision"], result["MissingContextValues"]) == ("allowed", [])
    result = iam.simulate_custom_policy(PolicyInputList=[policy], ActionNames=["dynamodb:CreateBackup"],
                                        ContextEntries=earlier)["EvaluationResults"][0]
    assert result["EvalDecision"] == "implicitDeny"
    result = iam.simulate_custom_policy(PolicyInputList=[policy], ActionNames=["dynamodb:CreateBackup"])["EvaluationResults"][0]
    assert (result["EvalDecision"], result["MissingContextValues"]) == ("implicitDeny", ["aws:CurrentTime"])


@pytest.mark.parametrize("condition,entries,expected", [
    ({"IpAddress": {"aws:SourceIp": "203.0.113.0/24"}}, [("aws:SourceIp", ["203.0.113.9"], "ip")], "allowed"),
    ({"NotIpAddress": {"aws:SourceIp": "203.0.113.0/24"}}, [("aws:SourceIp", ["203.0.113.9"], "ip")], "implicitDeny"),
    ({"Bool": {"aws:MultiFactorAuthPresent": "true"}}, [("aws:MultiFactorAuthPresent", ["true"], "boolean")], "allowed"),
    ({"BoolIfExists": {"aws:MultiFactorAuthPresent": "true"}}, [], "allowed"),
    ({"Null": {"aws:TokenIssueTime": "true"}}, [], "allowed"),
    ({"NumericLessThanEquals": {"s3:max-keys": "10"}}, [("s3:max-keys", ["11"], "numeric")], "implicitDeny"),
    ({"StringLike": {"s3:prefix": ["home/${aws:username}/*"]}},
     [("s3:prefix", ["home/alice/docs"], "string"), ("aws:username", ["alice"], "string")], "allowed"),
    ({"ArnLike": {"aws:SourceArn": "arn:aws:sns:*:*:alerts-*"}},
     [("aws:SourceArn", ["arn:aws:sns:us-east-1:1:alerts-prod"], "string")], "allowed"),
    ({"ForAllValues:StringEquals": {"aws:TagKeys": ["env", "team"]}},
     [("aws:TagKeys", ["env", "cost"], "stringList")], "implicitDeny"),
    ({"ForAnyValue:StringEquals": {"aws:TagKeys": ["env", "team"]}},
     [("aws:TagKeys", ["env", "cost"], "stringList")], "allowed"),
])
def test_condition_operators(iam, condition, entries, expected):
    context = [{"ContextKeyName": k, "ContextKeyValues": v, "ContextKeyType": t} for k, v, t in entries]
    result = iam.simulate_custom_policy(PolicyInputList=[doc(allow("s3:ListBucket", Condition=condition))],
                                        ActionNames=["s3:ListBucket"], ContextEntries=context)
    assert result["EvaluationResults"][0]["EvalDecision"] == expected


def test_permissions_boundaries_and_organization_policies(iam):
    admin = doc(allow("*"))
    boundary = doc(allow("s3:*"))
    out = iam.simulate_custom_policy(PolicyInputList=[admin], PermissionsBoundaryPolicyInputList=[boundary],
                                     ActionNames=["s3:GetObject", "ec2:RunInstances"])
    by_action = {r["EvalActionName"]: r for r in out["EvaluationResults"]}
    assert by_action["s3:GetObject"]["EvalDecision"] == "allowed"
    assert by_action["s3:GetObject"]["PermissionsBoundaryDecisionDetail"] == {"AllowedByPermissionsBoundary": True}
    assert by_action["ec2:RunInstances"]["EvalDecision"] == "implicitDeny"
    assert by_action["ec2:RunInstances"]["PermissionsBoundaryDecisionDetail"] == {"AllowedByPermissionsBoundary": False}
    out = iam.simulate_custom_policy(
        PolicyInputList=[admin], ActionNames=["ec2:RunInstances"],
        OrderedOrganizationPolicyInputList=[{"ServiceControlPolicyInputList": [doc(deny("ec2:*"), allow("*"))]}])
    result = out["EvaluationResults"][0]
    assert result["EvalDecision"] == "explicitDeny"
    assert result["OrganizationsDecisionDetail"] == {"AllowedByOrganizations": False}
    assert result["MatchedStatements"][0]["SourcePolicyId"] == "ServiceControlPolicyInputList.1"


def test_resource_policies_allow_their_principals(iam):
    caller = f"arn:aws:iam::{ACCOUNT}:user/alice"
    resource_policy = json.dumps({"Version": "2012-10-17", "Statement": [
        {"Effect": "Allow", "Principal": {"AWS": caller}, "Action": "s3:GetObject", "Resource": "arn:aws:s3:::b/*"}]})
    nothing = doc(allow("sqs:*"))
    args = dict(PolicyInputList=[nothing], ActionNames=["s3:GetObject"], ResourceArns=["arn:aws:s3:::b/k"],
                ResourcePolicy=resource_policy)
    result = iam.simulate_custom_policy(CallerArn=caller, **args)["EvaluationResults"][0]
    assert result["EvalDecision"] == "allowed"
    assert [(m["SourcePolicyId"], m["SourcePolicyType"]) for m in result["MatchedStatements"]] == [
        ("ResourcePolicy", "Resource Policy")]
    other = f"arn:aws:iam::{ACCOUNT}:user/bob"
    assert iam.simulate_custom_policy(CallerArn=other, **args)["EvaluationResults"][0]["EvalDecision"] == "implicitDeny"
    cross = iam.simulate_custom_policy(CallerArn=caller, ResourceOwner="arn:aws:iam::111122223333:root", **args)
    assert cross["EvaluationResults"][0]["EvalDecision"] == "implicitDeny"


def test_results_are_paged(iam):
    actions = [f"s3:Action{i}" for i in range(5)]
    first = iam.simulate_custom_policy(PolicyInputList=[doc(allow("s3:*"))], ActionNames=actions, MaxItems=2)
    assert first["IsTruncated"] and len(first["EvaluationResults"]) == 2
    seen = [r["EvalActionName"] for r in first["EvaluationResults"]]
    marker = first["Marker"]
    while marker:
        page = iam.simulate_custom_policy(PolicyInputList=[doc(allow("s3:*"))], ActionNames=actions, MaxItems=2,
                                          Marker=marker)
        seen += [r["EvalActionName"] for r in page["EvaluationResults"]]
        marker = page.get("Marker")
    assert seen == actions


def test_malformed_given_policies_are_invalid_input(iam):
    with pytest.raises(ClientError) as e:
        iam.simulate_custom_policy(PolicyInputList=["{not json"], ActionNames=["s3:GetObject"])
    assert error_of(e) == ("InvalidInput", "Syntax errors in policy.", 400)
    with pytest.raises(ClientError) as e:
        iam.simulate_custom_policy(PolicyInputList=[doc({"Effect": "Allow", "Resource": "*"})],
                                   ActionNames=["s3:GetObject"])
    assert error_of(e)[0:2] == ("InvalidInput", "Policy statement must contain actions.")
    with pytest.raises(ClientError) as e:
        iam.simulate_custom_policy(PolicyInputList=[doc(allow("s3:*"))], ActionNames=["s3:GetObject"],
                                   ResourcePolicy="[]")
    assert error_of(e)[0] == "InvalidInput"


# SimulatePrincipalPolicy

def test_a_users_own_group_and_managed_policies_are_simulated(iam):
    iam.create_user(UserName="alice")
    iam.put_user_policy(UserName="alice", PolicyName="inline-s3", PolicyDocument=doc(allow("s3:GetObject")))
    iam.create_group(GroupName="ops")
    iam.add_user_to_group(GroupName="ops", UserName="alice")
    iam.put_group_policy(GroupName="ops", PolicyName="no-delete", PolicyDocument=doc(deny("s3:DeleteObject")))
    managed = iam.create_policy(PolicyName="queues", PolicyDocument=doc(allow("sqs:*")))["Policy"]["Arn"]
    iam.attach_user_policy(UserName="alice", PolicyArn=managed)
    arn = iam.get_user(UserName="alice")["User"]["Arn"]
    out = iam.simulate_principal_policy(PolicySourceArn=arn,
                                        ActionNames=["s3:GetObject", "s3:DeleteObject", "sqs:SendMessage", "ec2:RunInstances"])
    results = {r["EvalActionName"]: r for r in out["EvaluationResults"]}
    assert {a: r["EvalDecision"] for a, r in results.items()} == {
        "s3:GetObject": "allowed", "s3:DeleteObject": "explicitDeny", "sqs:SendMessage": "allowed",
        "ec2:RunInstances": "implicitDeny"}
    sources = {a: [(m["SourcePolicyId"], m["SourcePolicyType"]) for m in r["MatchedStatements"]]
               for a, r in results.items()}
    assert sources["s3:GetObject"] == [("inline-s3", "user")]
    assert sources["s3:DeleteObject"] == [("no-delete", "group")]
    assert sources["sqs:SendMessage"] == [(managed, "user-managed")]
    excluded = iam.simulate_principal_policy(PolicySourceArn=arn, ActionNames=["sqs:SendMessage", "s3:DeleteObject"],
                                             PolicyExclusionList=[{"PolicyArn": managed}, {"InlinePolicyIdentifier": {
                                                 "PolicyName": "no-delete", "AttachmentType": "group",
                                                 "AttachmentName": "ops"}}])
    assert [r["EvalDecision"] for r in excluded["EvaluationResults"]] == ["implicitDeny", "implicitDeny"]


def test_a_roles_stored_boundary_and_administrator_access_apply(iam):
    trust = json.dumps({"Version": "2012-10-17", "Statement": [
        {"Effect": "Allow", "Principal": {"Service": "lambda.amazonaws.com"}, "Action": "sts:AssumeRole"}]})
    boundary = iam.create_policy(PolicyName="only-logs", PolicyDocument=doc(allow("logs:*")))["Policy"]["Arn"]
    role = iam.create_role(RoleName="fn", AssumeRolePolicyDocument=trust, PermissionsBoundary=boundary)["Role"]
    iam.attach_role_policy(RoleName="fn", PolicyArn="arn:aws:iam::aws:policy/AdministratorAccess")
    out = iam.simulate_principal_policy(PolicySourceArn=role["Arn"], ActionNames=["logs:PutLogEvents", "s3:GetObject"])
    results = {r["EvalActionName"]: r for r in out["EvaluationResults"]}
    assert results["logs:PutLogEvents"]["EvalDecision"] == "allowed"
    assert results["s3:GetObject"]["EvalDecision"] == "implicitDeny"
    assert results["s3:GetObject"]["PermissionsBoundaryDecisionDetail"] == {"AllowedByPermissionsBoundary": False}
    given = iam.simulate_principal_policy(PolicySourceArn=role["Arn"], ActionNames=["s3:GetObject"],
                                          PermissionsBoundaryPolicyInputList=[doc(allow("s3:*"))])
    assert given["EvaluationResults"][0]["EvalDecision"] == "allowed"


def test_simulating_an_unknown_principal_is_no_such_entity(iam):
    with pytest.raises(ClientError) as e:
        iam.simulate_principal_policy(PolicySourceArn=f"arn:aws:iam::{ACCOUNT}:user/nobody", ActionNames=["s3:*"])
    assert error_of(e) == ("NoSuchEntity", "The user with name nobody cannot be found.", 404)
    with pytest.raises(ClientError) as e:
        iam.simulate_principal_policy(PolicySourceArn="arn:aws:s3:::some-bucket", ActionNames=["s3:*"])
    assert error_of(e)[0::2] == ("InvalidInput", 400)


# Context keys

def test_context_keys_of_custom_policies_in_order_of_appearance(iam):
    first = json.dumps({"Version": "2012-10-17", "Statement": {
        "Effect": "Allow", "Action": "dynamodb:*",
        "Resource": "arn:aws:dynamodb:us-west-2:123456789012:table/${aws:username}",
        "Condition": {"DateGreaterThan": {"aws:CurrentTime": "2015-08-16T12:00:00Z"}}}})
    second = doc(allow("s3:*", Condition={"StringEquals": {"AWS:Username": "x", "s3:prefix": "home/"}}))
    keys = iam.get_context_keys_for_custom_policy(PolicyInputList=[first, second])["ContextKeyNames"]
    assert keys == ["aws:username", "aws:CurrentTime", "s3:prefix"]
    with pytest.raises(ClientError) as e:
        iam.get_context_keys_for_custom_policy(PolicyInputList=["nope"])
    assert error_of(e)[0] == "InvalidInput"


def test_context_keys_of_a_principals_policies(iam):
    iam.create_user(UserName="alice")
    iam.put_user_policy(UserName="alice", PolicyName="mfa",
                        PolicyDocument=doc(allow("*", Condition={"Bool": {"aws:MultiFactorAuthPresent": "true"}})))
    arn = iam.get_user(UserName="alice")["User"]["Arn"]
    extra = doc(allow("s3:*", Condition={"IpAddress": {"aws:SourceIp": "10.0.0.0/8"}}))
    keys = iam.get_context_keys_for_principal_policy(PolicySourceArn=arn, PolicyInputList=[extra])["ContextKeyNames"]
    assert keys == ["aws:MultiFactorAuthPresent", "aws:SourceIp"]
    with pytest.raises(ClientError) as e:
        iam.get_context_keys_for_principal_policy(PolicySourceArn=f"arn:aws:iam::{ACCOUNT}:role/none")
    assert error_of(e)[0] == "NoSuchEntity"
