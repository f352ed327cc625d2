"""STS through boto3, the AWS CLI and raw query requests."""

from __future__ import annotations

import datetime
import re
import xml.etree.ElementTree as ET

import boto3
import pytest
from botocore.config import Config
from botocore.exceptions import ClientError

NS = {"sts": "https://sts.amazonaws.com/doc/2011-06-15/"}
FORM = {"Content-Type": "application/x-www-form-urlencoded"}
ROLE = "arn:aws:iam::123456789012:role/deploy"


TRUST = '{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"AWS":"*"},"Action":"sts:AssumeRole"}]}'


@pytest.fixture(autouse=True)
def roles(client):
    """The roles these tests assume, in account 123456789012 (STS refuses a role IAM does
    not have)."""
    iam = client("iam", aws_access_key_id="123456789012", aws_secret_access_key="test")
    iam.create_role(RoleName="deploy", AssumeRolePolicyDocument=TRUST)
    iam.create_role(RoleName="runner", Path="/team/app/", AssumeRolePolicyDocument=TRUST)


def session_client(server, service, creds, region="us-east-1"):
    return boto3.client(
        service,
        endpoint_url=server.endpoint,
        aws_access_key_id=creds["AccessKeyId"],
        aws_secret_access_key=creds["SecretAccessKey"],
        aws_session_token=creds["SessionToken"],
        region_name=region,
        config=Config(retries={"max_attempts": 1}),
    )


def test_get_caller_identity_reports_the_default_account_root(client):
    identity = client("sts").get_caller_identity()
    assert identity["Account"] == "000000000000"
    assert identity["Arn"] == "arn:aws:iam::000000000000:root"
    assert identity["UserId"] == "000000000000"
    assert re.fullmatch(r"[0-9a-f-]{36}", identity["ResponseMetadata"]["RequestId"])


def test_account_id_flag_changes_the_default_account():
    from roto_server import RotoServer
    with RotoServer("--ephemeral", "--account-id", "444455556666") as s:
        sts = boto3.client("sts", endpoint_url=s.endpoint, region_name="us-east-1",
                           aws_access_key_id="test", aws_secret_access_key="test")
        assert sts.get_caller_identity()["Account"] == "444455556666"


def test_assume_role_returns_session_credentials_in_the_role_account(client):
    out = client("sts").assume_role(RoleArn=ROLE, RoleSessionName="ci-run", DurationSeconds=900)
    creds = out["Credentials"]
    assert re.fullmatch(r"ASIA[A-Z2-7]{16}", creds["AccessKeyId"])
    assert len(creds["SecretAccessKey"]) == 40
    assert len(creds["SessionToken"]) > 100
    lifetime = creds["Expiration"] - datetime.datetime.now(datetime.timezone.utc)
    assert 850 < lifetime.total_seconds() <= 901
    user = out["AssumedRoleUser"]
    assert user["Arn"] == "arn:aws:sts::123456789012:assumed-role/deploy/ci-run"
    assert re.fullmatch(r"AROA[A-Z2-7]{17}:ci-run", user["AssumedRoleId"])


def test_assumed_role_credentials_route_to_the_role_account(server, client):
    creds = client("sts").assume_role(RoleArn=ROLE, RoleSessionName="s1")["Credentials"]
    identity = session_client(server, "sts", creds).get_caller_identity()
    assert identity["Account"] == "123456789012"
    assert identity["Arn"] == "arn:aws:sts::123456789012:assumed-role/deploy/s1"
    assert identity["UserId"].endswith(":s1")
    entry = server.traces(operation="GetCallerIdentity")[-1]
    assert entry["account"] == "123456789012"


def test_assume_role_with_a_path_in_the_role_name(client):
    out = client("sts").assume_role(RoleArn="arn:aws:iam::123456789012:role/team/app/runner",
                                    RoleSessionName="x1")
    assert out["AssumedRoleUser"]["Arn"] == "arn:aws:sts::123456789012:assumed-role/runner/x1"


def test_assume_role_reports_packed_policy_size_for_a_session_policy(client):
    policy = '{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"s3:*","Resource":"*"}]}'
    out = client("sts").assume_role(RoleArn=ROLE, RoleSessionName="p1", Policy=policy)
    assert 0 < out["PackedPolicySize"] <= 100


@pytest.mark.parametrize("arn", ["this-is-not-an-arn-at-all", "arn:aws:iam::123:role/xxxxxxxx", "arn:aws:iam::123456789012:user/bob"])
def test_assume_role_rejects_invalid_role_arns(client, arn):
    with pytest.raises(ClientError) as e:
        client("sts").assume_role(RoleArn=arn, RoleSessionName="s1")
    assert e.value.response["Error"]["Code"] == "ValidationError"
    assert e.value.response["ResponseMetadata"]["HTTPStatusCode"] == 400


def test_assume_role_rejects_bad_session_names(client):
    with pytest.raises(ClientError) as e:
        client("sts").assume_role(RoleArn=ROLE, RoleSessionName="has space")
    err = e.value.response["Error"]
    assert err["Code"] == "ValidationError"
    assert "roleSessionName" in err["Message"]


def test_get_session_token_issues_credentials_for_the_caller(server, client):
    creds = client("sts").get_session_token(DurationSeconds=3600)["Credentials"]
    assert creds["AccessKeyId"].startswith("ASIA")
    identity = session_client(server, "sts", creds).get_caller_identity()
    assert identity["Account"] == "000000000000"


def test_get_session_token_with_session_credentials_is_access_denied(server, client):
    creds = client("sts").assume_role(RoleArn=ROLE, RoleSessionName="s2")["Credentials"]
    with pytest.raises(ClientError) as e:
        session_client(server, "sts", creds).get_session_token()
    assert e.value.response["Error"]["Code"] == "AccessDenied"
    assert e.value.response["ResponseMetadata"]["HTTPStatusCode"] == 403


def test_cli_get_caller_identity(aws):
    import json
    out = json.loads(aws("sts", "get-caller-identity").stdout)
    assert out["Account"] == "000000000000"


def test_raw_query_response_is_the_aws_xml(server):
    status, headers, body = server.request("POST", "/", b"Action=GetCallerIdentity&Version=2011-06-15", FORM)
    assert status == 200
    assert headers["content-type"].startswith("text/xml")
    root = ET.fromstring(body)
    assert root.tag == "{https://sts.amazonaws.com/doc/2011-06-15/}GetCallerIdentityResponse"
    assert root.find("sts:GetCallerIdentityResult/sts:Account", NS).text == "000000000000"
    assert root.find("sts:ResponseMetadata/sts:RequestId", NS).text


def test_raw_get_with_query_string_works(server):
    status, _, body = server.request("GET", "/?Action=GetCallerIdentity&Version=2011-06-15")
    assert status == 200
    assert b"<Account>000000000000</Account>" in body


def error_of(body: bytes) -> tuple[str, str, str]:
    root = ET.fromstring(body)
    err = root.find("sts:Error", NS)
    return err.find("sts:Type", NS).text, err.find("sts:Code", NS).text, err.find("sts:Message", NS).text


def test_unknown_action_is_invalid_action(server):
    status, _, body = server.request("POST", "/", b"Action=StealCredentials&Version=2011-06-15", FORM)
    assert status == 400
    assert error_of(body) == ("Sender", "InvalidAction",
                              "The action StealCredentials is not valid for this web service.")


def test_missing_required_parameter_is_a_validation_error(server):
    status, _, body = server.request("POST", "/", b"Action=AssumeRole&Version=2011-06-15&RoleSessionName=ab", FORM)
    assert status == 400
    kind, code, message = error_of(body)
    assert code == "ValidationError"
    assert message == ("1 validation error detected: Value null at 'roleArn' failed to satisfy constraint: "
                       "Member must not be null")


def test_out_of_range_duration_is_a_validation_error(server):
    body = (f"Action=AssumeRole&Version=2011-06-15&RoleArn={ROLE}&RoleSessionName=ab&DurationSeconds=10").encode()
    status, _, resp = server.request("POST", "/", body, FORM)
    assert status == 400
    _, code, message = error_of(resp)
    assert code == "ValidationError"
    assert "Member must have value greater than or equal to 900" in message


def test_non_numeric_duration_is_an_invalid_parameter(server):
    body = (f"Action=AssumeRole&Version=2011-06-15&RoleArn={ROLE}&RoleSessionName=ab&DurationSeconds=soon").encode()
    status, _, resp = server.request("POST", "/", body, FORM)
    assert status == 400
    assert error_of(resp)[1] == "InvalidParameterValue"


def test_get_federation_token_issues_a_federated_user(server, client):
    out = client("sts").get_federation_token(Name="carol", DurationSeconds=7200, Policy='{"Version": "2012-10-17"}')
    user = out["FederatedUser"]
    assert user == {"FederatedUserId": "000000000000:carol", "Arn": "arn:aws:sts::000000000000:federated-user/carol"}
    creds = out["Credentials"]
    assert creds["AccessKeyId"].startswith("ASIA")
    lasts = creds["Expiration"] - datetime.datetime.now(datetime.timezone.utc)
    assert lasts <= datetime.timedelta(hours=1), "the root user's federation sessions last at most an hour"
    assert out["PackedPolicySize"] > 0
    identity = session_client(server, "sts", creds).get_caller_identity()
    assert identity["Arn"] == user["Arn"]
    assert identity["UserId"] == "000000000000:carol"


def test_get_federation_token_errors(server, client):
    sts = client("sts")
    with pytest.raises(ClientError) as e:
        sts.get_federation_token(Name="bad name!")
    assert e.value.response["Error"]["Code"] == "ValidationError"
    assert "at 'name' failed to satisfy constraint" in e.value.response["Error"]["Message"]
    creds = sts.get_session_token()["Credentials"]
    with pytest.raises(ClientError) as e:
        session_client(server, "sts", creds).get_federation_token(Name="carol")
    assert e.value.response["Error"]["Code"] == "AccessDenied"
    assert e.value.response["ResponseMetadata"]["HTTPStatusCode"] == 403


def test_decode_authorization_message_has_nothing_to_decode(client):
    with pytest.raises(ClientError) as e:
        client("sts").decode_authorization_message(EncodedMessage="abc")
    assert e.value.response["Error"]["Code"] == "InvalidAuthorizationMessageException"
    assert e.value.response["ResponseMetadata"]["HTTPStatusCode"] == 400


def test_a_chained_session_cannot_set_an_inherited_transitive_tag_again(server, client):
    sts = client("sts", aws_access_key_id="123456789012", aws_secret_access_key="test")
    creds = sts.assume_role(RoleArn=ROLE, RoleSessionName="one", Tags=[{"Key": "team", "Value": "blue"}],
                            TransitiveTagKeys=["team"])["Credentials"]
    chained = session_client(server, "sts", creds)
    with pytest.raises(ClientError) as e:
        chained.assume_role(RoleArn=ROLE, RoleSessionName="two", Tags=[{"Key": "Team", "Value": "red"}])
    assert e.value.response["Error"]["Code"] == "InvalidParameterValue"
    assert e.value.response["Error"]["Message"] == (
        "One of the specified transitive tag keys can't be set because it conflicts with a transitive "
        "tag key from the calling session.")
    assert e.value.response["ResponseMetadata"]["HTTPStatusCode"] == 400
    # Other keys may still be set, and the inherited tag stays transitive down the chain.
    creds = chained.assume_role(RoleArn=ROLE, RoleSessionName="two",
                                Tags=[{"Key": "env", "Value": "dev"}])["Credentials"]
    with pytest.raises(ClientError) as e:
        session_client(server, "sts", creds).assume_role(RoleArn=ROLE, RoleSessionName="three",
                                                         Tags=[{"Key": "TEAM", "Value": "red"}])
    assert e.value.response["Error"]["Code"] == "InvalidParameterValue"
