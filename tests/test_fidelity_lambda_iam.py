"""Lambda, STS and IAM behaviour third parties (Terraform above all) rely on: code signing
configurations, tags on event source mappings, deprecated runtimes refused, and AssumeRole
of a role that does not exist."""

from __future__ import annotations

import re

import pytest
from botocore.exceptions import ClientError

from lambda_helpers import ECHO_CODE, ROLE

ACCOUNT = "000000000000"



@pytest.fixture
def lam(client):
    return client("lambda")


def create(lam, name="fn", runtime="python3.12"):
    lam.create_function(FunctionName=name, Runtime=runtime, Role=ROLE, Handler="app.handler", Code=ECHO_CODE)
    return name


def error_of(excinfo):
    err = excinfo.value.response["Error"]
    return err["Code"], err["Message"], excinfo.value.response["ResponseMetadata"]["HTTPStatusCode"]


# --- code signing ---------------------------------------------------------------------------

def test_function_without_code_signing_config_answers_an_empty_arn(lam):
    create(lam)
    got = lam.get_function_code_signing_config(FunctionName="fn")
    assert got["ResponseMetadata"]["HTTPStatusCode"] == 200
    assert got["FunctionName"] == "fn" and got["CodeSigningConfigArn"] == ""


def test_code_signing_config_of_a_missing_function_is_not_found(lam):
    with pytest.raises(ClientError) as e:
        lam.get_function_code_signing_config(FunctionName="nope")
    code, message, status = error_of(e)
    assert (code, status) == ("ResourceNotFoundException", 404)
    assert message == f"Function not found: arn:aws:lambda:us-east-1:{ACCOUNT}:function:nope"


def test_code_signing_config_crud_and_attachment(lam):
    create(lam)
    profile = f"arn:aws:signer:us-east-1:{ACCOUNT}:/signing-profiles/p/abc"
    csc = lam.create_code_signing_config(
        Description="d", AllowedPublishers={"SigningProfileVersionArns": [profile]},
        Tags={"team": "a"})["CodeSigningConfig"]
    assert re.fullmatch(r"csc-[a-z0-9]{17}", csc["CodeSigningConfigId"])
    arn = csc["CodeSigningConfigArn"]
    assert arn == f"arn:aws:lambda:us-east-1:{ACCOUNT}:code-signing-config:{csc['CodeSigningConfigId']}"
    assert csc["CodeSigningPolicies"] == {"UntrustedArtifactOnDeployment": "Warn"}
    assert lam.get_code_signing_config(CodeSigningConfigArn=arn)["CodeSigningConfig"] == csc
    assert lam.list_tags(Resource=arn)["Tags"] == {"team": "a"}
    updated = lam.update_code_signing_config(
        CodeSigningConfigArn=arn, CodeSigningPolicies={"UntrustedArtifactOnDeployment": "Enforce"})
    assert updated["CodeSigningConfig"]["CodeSigningPolicies"] == {"UntrustedArtifactOnDeployment": "Enforce"}
    assert [c["CodeSigningConfigArn"] for c in lam.list_code_signing_configs()["CodeSigningConfigs"]] == [arn]

    put = lam.put_function_code_signing_config(FunctionName="fn", CodeSigningConfigArn=arn)
    assert (put["FunctionName"], put["CodeSigningConfigArn"]) == ("fn", arn)
    assert lam.get_function_code_signing_config(FunctionName="fn")["CodeSigningConfigArn"] == arn
    assert lam.list_functions_by_code_signing_config(CodeSigningConfigArn=arn)["FunctionArns"] == [
        f"arn:aws:lambda:us-east-1:{ACCOUNT}:function:fn"]
    with pytest.raises(ClientError) as e:
        lam.delete_code_signing_config(CodeSigningConfigArn=arn)
    assert error_of(e)[0] == "ResourceConflictException"
    deleted = lam.delete_function_code_signing_config(FunctionName="fn")
    assert deleted["ResponseMetadata"]["HTTPStatusCode"] == 204
    assert lam.get_function_code_signing_config(FunctionName="fn")["CodeSigningConfigArn"] == ""
    assert lam.delete_code_signing_config(CodeSigningConfigArn=arn)["ResponseMetadata"]["HTTPStatusCode"] == 204
    with pytest.raises(ClientError) as e:
        lam.get_code_signing_config(CodeSigningConfigArn=arn)
    code, message, status = error_of(e)
    assert (code, status) == ("ResourceNotFoundException", 404)
    assert message == f"The Lambda code signing configuration {arn} can not be found."


def test_attaching_a_missing_code_signing_config_is_refused(lam):
    create(lam)
    arn = f"arn:aws:lambda:us-east-1:{ACCOUNT}:code-signing-config:csc-0123456789abcdefg"
    with pytest.raises(ClientError) as e:
        lam.put_function_code_signing_config(FunctionName="fn", CodeSigningConfigArn=arn)
    code, _, status = error_of(e)
    assert (code, status) == ("CodeSigningConfigNotFoundException", 404)


# --- event source mapping tags --------------------------------------------------------------

def test_event_source_mappings_carry_tags(client, lam):
    create(lam)
    queue = client("sqs").create_queue(QueueName="src")["QueueUrl"]
    queue_arn = client("sqs").get_queue_attributes(QueueUrl=queue, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    mapping = lam.create_event_source_mapping(EventSourceArn=queue_arn, FunctionName="fn", Enabled=False,
                                              Tags={"env": "test"})
    arn = mapping["EventSourceMappingArn"]
    assert arn == f"arn:aws:lambda:us-east-1:{ACCOUNT}:event-source-mapping:{mapping['UUID']}"
    assert lam.list_tags(Resource=arn)["Tags"] == {"env": "test"}
    lam.tag_resource(Resource=arn, Tags={"owner": "me"})
    assert lam.list_tags(Resource=arn)["Tags"] == {"env": "test", "owner": "me"}
    lam.untag_resource(Resource=arn, TagKeys=["env"])
    assert lam.list_tags(Resource=arn)["Tags"] == {"owner": "me"}
    lam.delete_event_source_mapping(UUID=mapping["UUID"])
    with pytest.raises(ClientError) as e:
        lam.list_tags(Resource=arn)
    assert error_of(e)[0] == "ResourceNotFoundException"


def test_tags_of_a_missing_event_source_mapping_are_not_found(lam):
    arn = f"arn:aws:lambda:us-east-1:{ACCOUNT}:event-source-mapping:12345678-1234-1234-1234-123456789012"
    with pytest.raises(ClientError) as e:
        lam.tag_resource(Resource=arn, Tags={"a": "b"})
    code, _, status = error_of(e)
    assert (code, status) == ("ResourceNotFoundException", 404)


# --- deprecated runtimes --------------------------------------------------------------------

@pytest.mark.parametrize("runtime, recommended", [
    ("python2.7", "python3.13"), ("python3.6", "python3.13"), ("nodejs12.x", "nodejs22.x"),
    ("go1.x", "provided.al2023"), ("dotnetcore3.1", "dotnet8"), ("ruby2.7", "ruby3.4"),
])
def test_create_function_refuses_a_deprecated_runtime(lam, runtime, recommended):
    with pytest.raises(ClientError) as e:
        create(lam, runtime=runtime)
    assert error_of(e) == (
        "InvalidParameterValueException",
        f"The runtime parameter of {runtime} is no longer supported for creating or updating AWS Lambda "
        f"functions. We recommend you use the new runtime ({recommended}) while creating or updating functions.",
        400)
    assert lam.list_functions()["Functions"] == []


def test_update_function_configuration_refuses_a_deprecated_runtime(lam):
    create(lam)
    with pytest.raises(ClientError) as e:
        lam.update_function_configuration(FunctionName="fn", Runtime="nodejs10.x")
    code, message, status = error_of(e)
    assert (code, status) == ("InvalidParameterValueException", 400)
    assert message.startswith("The runtime parameter of nodejs10.x is no longer supported")
    assert lam.get_function_configuration(FunctionName="fn")["Runtime"] == "python3.12"
    assert lam.update_function_configuration(FunctionName="fn", Runtime="python3.13")["Runtime"] == "python3.13"


# --- STS AssumeRole of a missing role -------------------------------------------------------

TRUST = '{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"AWS":"*"},"Action":"sts:AssumeRole"}]}'


def test_assume_role_of_a_missing_role_is_access_denied_for_the_caller(client):
    role = f"arn:aws:iam::{ACCOUNT}:role/missing"
    with pytest.raises(ClientError) as e:
        client("sts").assume_role(RoleArn=role, RoleSessionName="s1")
    assert error_of(e) == (
        "AccessDenied",
        f"User: arn:aws:iam::{ACCOUNT}:root is not authorized to perform: sts:AssumeRole on resource: {role}",
        403)


def test_assume_role_of_a_missing_role_names_the_iam_user_calling(client):
    iam = client("iam")
    iam.create_user(UserName="dev")
    key = iam.create_access_key(UserName="dev")["AccessKey"]
    sts = client("sts", aws_access_key_id=key["AccessKeyId"], aws_secret_access_key=key["SecretAccessKey"])
    role = "arn:aws:iam::111122223333:role/other"
    with pytest.raises(ClientError) as e:
        sts.assume_role(RoleArn=role, RoleSessionName="s1")
    assert error_of(e) == (
        "AccessDenied",
        f"User: arn:aws:iam::{ACCOUNT}:user/dev is not authorized to perform: sts:AssumeRole on resource: {role}",
        403)


def test_assume_role_of_a_role_iam_has_succeeds_and_deleting_it_denies_again(client):
    iam, sts = client("iam"), client("sts")
    arn = iam.create_role(RoleName="app", AssumeRolePolicyDocument=TRUST)["Role"]["Arn"]
    assert sts.assume_role(RoleArn=arn, RoleSessionName="s1")["AssumedRoleUser"]["Arn"] == \
        f"arn:aws:sts::{ACCOUNT}:assumed-role/app/s1"
    iam.delete_role(RoleName="app")
    with pytest.raises(ClientError) as e:
        sts.assume_role(RoleArn=arn, RoleSessionName="s1")
    assert error_of(e)[0] == "AccessDenied"


def test_assume_role_with_web_identity_of_a_missing_role_is_access_denied(client):
    with pytest.raises(ClientError) as e:
        client("sts").assume_role_with_web_identity(
            RoleArn=f"arn:aws:iam::{ACCOUNT}:role/missing", RoleSessionName="s1",
            WebIdentityToken="eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.")
    assert error_of(e) == ("AccessDenied", "Not authorized to perform sts:AssumeRoleWithWebIdentity", 403)
