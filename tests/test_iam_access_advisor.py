"""IAM Access Advisor through boto3: GenerateServiceLastAccessedDetails and its reports, and
ListPoliciesGrantingServiceAccess."""

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


def doc(*actions):
    return json.dumps({"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": list(actions), "Resource": "*"}]})


def test_a_users_report_lists_the_services_its_policies_grant(iam):
    iam.create_user(UserName="alice")
    iam.put_user_policy(UserName="alice", PolicyName="data", PolicyDocument=doc("s3:GetObject", "dynamodb:Query"))
    iam.create_group(GroupName="dev")
    iam.add_user_to_group(GroupName="dev", UserName="alice")
    iam.put_group_policy(GroupName="dev", PolicyName="git", PolicyDocument=doc("codecommit:GitPull"))
    arn = iam.get_user(UserName="alice")["User"]["Arn"]
    job = iam.generate_service_last_accessed_details(Arn=arn)["JobId"]
    assert len(job) == 36
    report = iam.get_service_last_accessed_details(JobId=job)
    assert report["JobStatus"] == "COMPLETED" and report["JobType"] == "SERVICE_LEVEL"
    assert report["JobCompletionDate"] >= report["JobCreationDate"]
    services = report["ServicesLastAccessed"]
    assert [s["ServiceNamespace"] for s in services] == ["codecommit", "dynamodb", "s3"]
    s3 = services[-1]
    assert s3["ServiceName"] == "Amazon S3" and s3["TotalAuthenticatedEntities"] == 0
    assert "LastAuthenticated" not in s3
    page = iam.get_service_last_accessed_details(JobId=job, MaxItems=2)
    assert page["IsTruncated"] and len(page["ServicesLastAccessed"]) == 2
    rest = iam.get_service_last_accessed_details(JobId=job, Marker=page["Marker"])
    assert [s["ServiceNamespace"] for s in rest["ServicesLastAccessed"]] == ["s3"]


def test_action_level_reports_track_actions(iam):
    iam.create_role(RoleName="fn", AssumeRolePolicyDocument=json.dumps({"Version": "2012-10-17", "Statement": [
        {"Effect": "Allow", "Principal": {"Service": "lambda.amazonaws.com"}, "Action": "sts:AssumeRole"}]}))
    iam.put_role_policy(RoleName="fn", PolicyName="q", PolicyDocument=doc("sqs:*"))
    arn = iam.get_role(RoleName="fn")["Role"]["Arn"]
    job = iam.generate_service_last_accessed_details(Arn=arn, Granularity="ACTION_LEVEL")["JobId"]
    report = iam.get_service_last_accessed_details(JobId=job)
    assert report["JobType"] == "ACTION_LEVEL"
    assert [(s["ServiceNamespace"], s["TrackedActionsLastAccessed"]) for s in report["ServicesLastAccessed"]] == [
        ("sqs", [])]


def test_a_policys_report_lists_its_entities(iam):
    policy = iam.create_policy(PolicyName="queues", PolicyDocument=doc("sqs:SendMessage"))["Policy"]["Arn"]
    iam.create_user(UserName="alice")
    iam.create_group(GroupName="ops")
    iam.attach_user_policy(UserName="alice", PolicyArn=policy)
    iam.attach_group_policy(GroupName="ops", PolicyArn=policy)
    job = iam.generate_service_last_accessed_details(Arn=policy)["JobId"]
    assert [s["ServiceNamespace"] for s in iam.get_service_last_accessed_details(JobId=job)["ServicesLastAccessed"]] == ["sqs"]
    details = iam.get_service_last_accessed_details_with_entities(JobId=job, ServiceNamespace="sqs")
    infos = [d["EntityInfo"] for d in details["EntityDetailsList"]]
    assert [(i["Type"], i["Name"]) for i in infos] == [("GROUP", "ops"), ("USER", "alice")]
    assert infos[1]["Arn"] == f"arn:aws:iam::{ACCOUNT}:user/alice" and infos[1]["Id"].startswith("AIDA")
    assert details["JobStatus"] == "COMPLETED"


def test_access_advisor_errors(iam):
    with pytest.raises(ClientError) as e:
        iam.generate_service_last_accessed_details(Arn=f"arn:aws:iam::{ACCOUNT}:user/nobody")
    assert error_of(e) == ("NoSuchEntity", "The user with name nobody cannot be found.", 404)
    with pytest.raises(ClientError) as e:
        iam.generate_service_last_accessed_details(Arn=f"arn:aws:iam::{ACCOUNT}:policy/none")
    assert error_of(e)[0] == "NoSuchEntity"
    job = "00000000-0000-4000-8000-000000000000"
    with pytest.raises(ClientError) as e:
        iam.get_service_last_accessed_details(JobId=job)
    assert error_of(e) == ("NoSuchEntity", f"No such job {job} exists.", 404)


def test_policies_granting_service_access(iam):
    iam.create_user(UserName="alice")
    iam.put_user_policy(UserName="alice", PolicyName="inline-s3", PolicyDocument=doc("s3:*"))
    managed = iam.create_policy(PolicyName="everything", PolicyDocument=doc("*"))["Policy"]["Arn"]
    iam.attach_user_policy(UserName="alice", PolicyArn=managed)
    arn = iam.get_user(UserName="alice")["User"]["Arn"]
    out = iam.list_policies_granting_service_access(Arn=arn, ServiceNamespaces=["s3", "sqs"])
    entries = {e["ServiceNamespace"]: e["Policies"] for e in out["PoliciesGrantingServiceAccess"]}
    assert entries["s3"] == [
        {"PolicyName": "inline-s3", "PolicyType": "INLINE", "EntityType": "USER", "EntityName": "alice"},
        {"PolicyName": "everything", "PolicyType": "MANAGED", "PolicyArn": managed},
    ]
    assert entries["sqs"] == [{"PolicyName": "everything", "PolicyType": "MANAGED", "PolicyArn": managed}]
    assert out["IsTruncated"] is False
