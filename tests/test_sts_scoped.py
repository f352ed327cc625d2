"""STS's derived sessions: AssumeRoot (a member account's root, scoped to a root-task policy),
GetScopedCredentials (the caller's own session, narrowed) and GetDelegatedAccessToken."""

from __future__ import annotations

import datetime
import json

import pytest
from botocore.exceptions import ClientError

from access_helpers import client as signed_client

TRUST = json.dumps({"Version": "2012-10-17", "Statement": [
    {"Effect": "Allow", "Principal": {"AWS": "*"}, "Action": "sts:AssumeRole"}]})
TASK = {"arn": "arn:aws:iam::aws:policy/root-task/S3UnlockBucketPolicy"}


def session_client(server, service, creds):
    return signed_client(server, service, creds["AccessKeyId"], creds["SecretAccessKey"],
                         creds["SessionToken"])


def error_of(excinfo):
    err = excinfo.value.response
    return err["Error"]["Code"], err["ResponseMetadata"]["HTTPStatusCode"]


@pytest.fixture
def role_session(server, client):
    client("iam").create_role(RoleName="admin", AssumeRolePolicyDocument=TRUST)
    creds = client("sts").assume_role(
        RoleArn="arn:aws:iam::000000000000:role/admin", RoleSessionName="ops", DurationSeconds=1800
    )["Credentials"]
    return session_client(server, "sts", creds)


def test_assume_root_issues_a_short_session_as_the_member_account_root(server, role_session):
    out = role_session.assume_root(TargetPrincipal="111122223333", TaskPolicyArn=TASK)
    creds = out["Credentials"]
    assert creds["AccessKeyId"].startswith("ASIA")
    left = creds["Expiration"] - datetime.datetime.now(datetime.timezone.utc)
    assert datetime.timedelta(seconds=880) < left <= datetime.timedelta(seconds=900)
    identity = session_client(server, "sts", creds).get_caller_identity()
    assert identity["Account"] == "111122223333"
    assert identity["Arn"] == "arn:aws:iam::111122223333:root"


def test_assume_root_takes_an_account_arn_and_a_shorter_duration(role_session):
    out = role_session.assume_root(
        TargetPrincipal="arn:aws:iam::111122223333:root", TaskPolicyArn=TASK, DurationSeconds=60
    )
    left = out["Credentials"]["Expiration"] - datetime.datetime.now(datetime.timezone.utc)
    assert left <= datetime.timedelta(seconds=60)


def test_assume_root_refusals(client, role_session):
    with pytest.raises(ClientError) as e:
        client("sts").assume_root(TargetPrincipal="111122223333", TaskPolicyArn=TASK)
    assert error_of(e) == ("AccessDenied", 403)
    with pytest.raises(ClientError) as e:
        role_session.assume_root(
            TargetPrincipal="111122223333",
            TaskPolicyArn={"arn": "arn:aws:iam::aws:policy/AdministratorAccess"},
        )
    assert error_of(e) == ("ValidationError", 400)
    with pytest.raises(ClientError) as e:
        role_session.assume_root(TargetPrincipal="not-an-account", TaskPolicyArn=TASK)
    assert error_of(e) == ("ValidationError", 400)
    with pytest.raises(ClientError) as e:
        role_session.assume_root(TargetPrincipal="111122223333", TaskPolicyArn=TASK, DurationSeconds=901)
    assert error_of(e) == ("ValidationError", 400)


def test_scoped_credentials_keep_the_identity_and_never_outlive_the_session(server, role_session):
    policy = json.dumps({"Version": "2012-10-17", "Statement": [
        {"Effect": "Allow", "Action": "s3:GetObject", "Resource": "*"}]})
    out = role_session.get_scoped_credentials(Policy=policy, DurationSeconds=600)
    assert out["SessionInfo"]["Arn"] == "arn:aws:sts::000000000000:assumed-role/admin/ops"
    assert out["SessionInfo"]["ScopedSessionId"].endswith(":ops")
    scoped = session_client(server, "sts", out["Credentials"])
    assert scoped.get_caller_identity()["Arn"] == out["SessionInfo"]["Arn"]
    default = role_session.get_scoped_credentials()["Credentials"]["Expiration"]
    left = default - datetime.datetime.now(datetime.timezone.utc)
    assert datetime.timedelta(seconds=1700) < left <= datetime.timedelta(seconds=1800)
    with pytest.raises(ClientError) as e:
        role_session.get_scoped_credentials(DurationSeconds=7200)
    assert error_of(e) == ("InsufficientSessionLifetime", 400)
    with pytest.raises(ClientError) as e:
        role_session.get_scoped_credentials(Policy="{not json")
    assert error_of(e) == ("MalformedPolicyDocument", 400)


def test_scoped_credentials_need_temporary_credentials(client):
    with pytest.raises(ClientError) as e:
        client("sts").get_scoped_credentials()
    assert error_of(e) == ("InvalidSubjectCredentials", 400)


def test_a_trade_in_token_roto_never_issued_cannot_be_exchanged(client):
    with pytest.raises(ClientError) as e:
        client("sts").get_delegated_access_token(TradeInToken="token-from-elsewhere")
    assert error_of(e) == ("ExpiredTradeInTokenException", 400)
