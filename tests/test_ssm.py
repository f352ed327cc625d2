"""SSM Parameter Store through boto3 and the AWS CLI: types, SecureString through KMS,
versions, selectors, labels, hierarchy queries, filters, tags and the errors."""

from __future__ import annotations

import base64
import json

import pytest
from botocore.exceptions import ClientError


def error(excinfo):
    return excinfo.value.response["Error"]["Code"], excinfo.value.response["Error"]["Message"]


@pytest.fixture
def ssm(client):
    return client("ssm")


def test_put_and_get_string_and_string_list(ssm):
    assert ssm.put_parameter(Name="/app/url", Value="http://x", Type="String")["Version"] == 1
    p = ssm.get_parameter(Name="/app/url")["Parameter"]
    assert (p["Name"], p["Type"], p["Value"], p["Version"], p["DataType"]) == ("/app/url", "String", "http://x", 1, "text")
    assert p["ARN"] == "arn:aws:ssm:us-east-1:000000000000:parameter/app/url"
    ssm.put_parameter(Name="hosts", Value="a,b,c", Type="StringList")
    plain = ssm.get_parameter(Name="hosts")["Parameter"]
    assert plain["Value"] == "a,b,c" and plain["ARN"] == "arn:aws:ssm:us-east-1:000000000000:parameter/hosts"


def test_put_returns_version_and_tier(ssm):
    out = ssm.put_parameter(Name="/v", Value="1", Type="String")
    assert (out["Version"], out["Tier"]) == (1, "Standard")


def test_secure_string_is_encrypted_through_the_default_kms_key(client, ssm):
    ssm.put_parameter(Name="/db/password", Value="hunter2", Type="SecureString")
    raw = ssm.get_parameter(Name="/db/password")["Parameter"]["Value"]
    assert raw != "hunter2" and b"hunter2" not in base64.b64decode(raw)
    assert ssm.get_parameter(Name="/db/password", WithDecryption=True)["Parameter"]["Value"] == "hunter2"
    meta = ssm.describe_parameters(ParameterFilters=[{"Key": "Name", "Values": ["/db/password"]}])["Parameters"][0]
    assert meta["KeyId"] == "alias/aws/ssm"
    assert client("kms").describe_key(KeyId="alias/aws/ssm")["KeyMetadata"]["KeyManager"] == "AWS"


def test_secure_string_with_a_customer_key_fails_once_the_key_is_disabled(client, ssm):
    kms = client("kms")
    key = kms.create_key()["KeyMetadata"]["KeyId"]
    ssm.put_parameter(Name="/cmk", Value="v", Type="SecureString", KeyId=key)
    assert ssm.get_parameter(Name="/cmk", WithDecryption=True)["Parameter"]["Value"] == "v"
    kms.disable_key(KeyId=key)
    with pytest.raises(ClientError) as e:
        ssm.get_parameter(Name="/cmk", WithDecryption=True)
    assert error(e)[0] == "InvalidKeyId"
    with pytest.raises(ClientError) as e:
        ssm.put_parameter(Name="/cmk2", Value="v", Type="SecureString", KeyId="alias/missing")
    assert error(e)[0] == "InvalidKeyId"


def test_overwrite_rules_and_versions(ssm):
    ssm.put_parameter(Name="/o", Value="1", Type="String")
    with pytest.raises(ClientError) as e:
        ssm.put_parameter(Name="/o", Value="2", Type="String")
    assert error(e) == (
        "ParameterAlreadyExists",
        "The parameter already exists. To overwrite this value, set the overwrite option in the request to true.",
    )
    assert ssm.put_parameter(Name="/o", Value="2", Overwrite=True)["Version"] == 2
    with pytest.raises(ClientError) as e:
        ssm.put_parameter(Name="/o", Value="3", Overwrite=True, Tags=[{"Key": "k", "Value": "v"}])
    assert error(e)[0] == "ValidationException"
    assert ssm.get_parameter(Name="/o:1")["Parameter"]["Value"] == "1"
    got = ssm.get_parameter(Name="/o:2")["Parameter"]
    assert got["Value"] == "2" and got["Selector"] == ":2"
    with pytest.raises(ClientError) as e:
        ssm.get_parameter(Name="/o:9")
    assert error(e) == (
        "ParameterVersionNotFound",
        "Systems Manager could not find version 9 of /o. Verify the version and try again.",
    )


def test_missing_parameter_is_parameter_not_found(ssm):
    with pytest.raises(ClientError) as e:
        ssm.get_parameter(Name="/nope")
    assert error(e)[0] == "ParameterNotFound"
    with pytest.raises(ClientError) as e:
        ssm.delete_parameter(Name="/nope")
    assert error(e)[0] == "ParameterNotFound"
    with pytest.raises(ClientError) as e:
        ssm.get_parameter_history(Name="/nope")
    assert error(e)[0] == "ParameterNotFound"


@pytest.mark.parametrize("name,code", [
    ("a/b", "ValidationException"),
    ("/bad name", "ValidationException"),
    ("awsthing", "ValidationException"),
    ("/ssm/x", "ValidationException"),
    ("/aws/x", "AccessDeniedException"),
    ("/" + "/".join(["l"] * 16), "HierarchyLevelLimitExceededException"),
])
def test_name_rules_are_enforced(ssm, name, code):
    with pytest.raises(ClientError) as e:
        ssm.put_parameter(Name=name, Value="v", Type="String")
    assert error(e)[0] == code


def test_type_is_required_on_create_and_validated_by_the_model(ssm):
    with pytest.raises(ClientError) as e:
        ssm.put_parameter(Name="/t", Value="v")
    assert error(e)[0] == "ValidationException"
    with pytest.raises(ClientError) as e:
        ssm.put_parameter(Name="/t", Value="v", Type="Number")
    assert error(e)[0] == "ValidationException"


def test_allowed_pattern_and_tiers(ssm):
    ssm.put_parameter(Name="/num", Value="42", Type="String", AllowedPattern=r"^\d+$")
    with pytest.raises(ClientError) as e:
        ssm.put_parameter(Name="/num", Value="x", Type="String", Overwrite=True)
    assert error(e)[0] == "ParameterPatternMismatchException"
    with pytest.raises(ClientError) as e:
        ssm.put_parameter(Name="/big", Value="x" * 5000, Type="String")
    assert error(e)[0] == "ValidationException"
    assert ssm.put_parameter(Name="/big", Value="x" * 5000, Type="String", Tier="Advanced")["Tier"] == "Advanced"
    with pytest.raises(ClientError) as e:
        ssm.put_parameter(Name="/big", Value="y", Type="String", Tier="Standard", Overwrite=True)
    assert error(e)[0] == "ValidationException"
    assert ssm.put_parameter(Name="/auto", Value="x" * 5000, Type="String", Tier="Intelligent-Tiering")["Tier"] == "Advanced"


def test_get_parameters_reports_invalid_names(ssm):
    ssm.put_parameter(Name="/a", Value="1", Type="String")
    ssm.put_parameter(Name="/b", Value="2", Type="SecureString")
    out = ssm.get_parameters(Names=["/a", "/b", "/missing", "/a:7"], WithDecryption=True)
    assert {p["Name"]: p["Value"] for p in out["Parameters"]} == {"/a": "1", "/b": "2"}
    assert sorted(out["InvalidParameters"]) == ["/a:7", "/missing"]


def test_get_parameters_by_path_one_level_recursive_and_paginated(ssm):
    for name in ["/svc/a", "/svc/b", "/svc/deep/c", "/other/x"]:
        ssm.put_parameter(Name=name, Value=name, Type="String")
    names = lambda **kw: [p["Name"] for p in ssm.get_parameters_by_path(**kw)["Parameters"]]
    assert names(Path="/svc") == ["/svc/a", "/svc/b"]
    assert names(Path="/svc/", Recursive=True) == ["/svc/a", "/svc/b", "/svc/deep/c"]
    first = ssm.get_parameters_by_path(Path="/", Recursive=True, MaxResults=3)
    rest = ssm.get_parameters_by_path(Path="/", Recursive=True, MaxResults=3, NextToken=first["NextToken"])
    assert len(first["Parameters"]) == 3 and len(rest["Parameters"]) == 1 and "NextToken" not in rest
    with pytest.raises(ClientError) as e:
        ssm.get_parameters_by_path(Path="svc")
    assert error(e)[0] == "ValidationException"
    with pytest.raises(ClientError) as e:
        ssm.get_parameters_by_path(Path="/svc", ParameterFilters=[{"Key": "Name", "Values": ["x"]}])
    assert error(e)[0] == "InvalidFilterKey"


def test_by_path_filters_on_type_and_decrypts(ssm):
    ssm.put_parameter(Name="/f/plain", Value="p", Type="String")
    ssm.put_parameter(Name="/f/secret", Value="s", Type="SecureString")
    out = ssm.get_parameters_by_path(
        Path="/f", WithDecryption=True, ParameterFilters=[{"Key": "Type", "Values": ["SecureString"]}]
    )["Parameters"]
    assert [(p["Name"], p["Value"]) for p in out] == [("/f/secret", "s")]


def test_describe_parameters_filters(ssm):
    ssm.put_parameter(Name="/env/prod/db", Value="1", Type="String", Description="database",
                      Tags=[{"Key": "team", "Value": "core"}])
    ssm.put_parameter(Name="/env/dev/db", Value="2", Type="SecureString")
    ssm.put_parameter(Name="top", Value="3", Type="StringList")
    names = lambda **kw: [p["Name"] for p in ssm.describe_parameters(**kw)["Parameters"]]
    assert names() == ["/env/dev/db", "/env/prod/db", "top"]
    assert names(ParameterFilters=[{"Key": "Name", "Option": "BeginsWith", "Values": ["/env/p"]}]) == ["/env/prod/db"]
    assert names(ParameterFilters=[{"Key": "Name", "Option": "Contains", "Values": ["db"]}]) == ["/env/dev/db", "/env/prod/db"]
    assert names(ParameterFilters=[{"Key": "Path", "Option": "Recursive", "Values": ["/env"]}]) == ["/env/dev/db", "/env/prod/db"]
    assert names(ParameterFilters=[{"Key": "Path", "Values": ["/env"]}]) == []
    assert names(ParameterFilters=[{"Key": "tag:team", "Values": ["core"]}]) == ["/env/prod/db"]
    assert names(Filters=[{"Key": "Type", "Values": ["StringList"]}]) == ["top"]
    meta = ssm.describe_parameters(ParameterFilters=[{"Key": "Name", "Values": ["/env/prod/db"]}])["Parameters"][0]
    assert meta["Description"] == "database" and meta["Version"] == 1 and meta["Tier"] == "Standard"
    with pytest.raises(ClientError) as e:
        ssm.describe_parameters(ParameterFilters=[{"Key": "Name", "Option": "Recursive", "Values": ["x"]}])
    assert error(e)[0] == "InvalidFilterOption"


def test_history_and_labels(ssm):
    for value in ["1", "2", "3"]:
        ssm.put_parameter(Name="/h", Value=value, Type="String", Overwrite=True)
    out = ssm.label_parameter_version(Name="/h", ParameterVersion=1, Labels=["stable", "awsbad", "1x"])
    assert out["ParameterVersion"] == 1 and sorted(out["InvalidLabels"]) == ["1x", "awsbad"]
    assert ssm.get_parameter(Name="/h:stable")["Parameter"]["Value"] == "1"
    ssm.label_parameter_version(Name="/h", Labels=["stable"])
    assert ssm.get_parameter(Name="/h:stable")["Parameter"]["Value"] == "3"
    history = ssm.get_parameter_history(Name="/h")["Parameters"]
    assert [(h["Version"], h["Value"], h["Labels"]) for h in history] == [(1, "1", []), (2, "2", []), (3, "3", ["stable"])]
    removed = ssm.unlabel_parameter_version(Name="/h", ParameterVersion=3, Labels=["stable", "nope"])
    assert removed["RemovedLabels"] == ["stable"] and removed["InvalidLabels"] == ["nope"]
    with pytest.raises(ClientError) as e:
        ssm.label_parameter_version(Name="/h", ParameterVersion=7, Labels=["x"])
    assert error(e)[0] == "ParameterVersionNotFound"
    ssm.label_parameter_version(Name="/h", ParameterVersion=1, Labels=[f"l{i}" for i in range(6)])
    with pytest.raises(ClientError) as e:
        ssm.label_parameter_version(Name="/h", ParameterVersion=1, Labels=[f"m{i}" for i in range(5)])
    assert error(e)[0] == "ParameterVersionLabelLimitExceeded"


def test_history_of_secure_string_shows_key_and_decrypts_on_request(ssm):
    ssm.put_parameter(Name="/sh", Value="one", Type="SecureString")
    ssm.put_parameter(Name="/sh", Value="two", Type="SecureString", Overwrite=True)
    history = ssm.get_parameter_history(Name="/sh", WithDecryption=True)["Parameters"]
    assert [h["Value"] for h in history] == ["one", "two"]
    assert all(h["KeyId"] == "alias/aws/ssm" for h in history)


def test_delete_parameters_reports_deleted_and_invalid(ssm):
    ssm.put_parameter(Name="/d1", Value="1", Type="String")
    ssm.put_parameter(Name="/d2", Value="2", Type="String")
    ssm.delete_parameter(Name="/d1")
    out = ssm.delete_parameters(Names=["/d2", "/d1"])
    assert out["DeletedParameters"] == ["/d2"] and out["InvalidParameters"] == ["/d1"]
    ssm.put_parameter(Name="/d1", Value="again", Type="String")
    assert ssm.get_parameter(Name="/d1")["Parameter"]["Version"] == 1


def test_tags_on_parameters(ssm):
    ssm.put_parameter(Name="/tg", Value="v", Type="String", Tags=[{"Key": "a", "Value": "1"}])
    ssm.add_tags_to_resource(ResourceType="Parameter", ResourceId="/tg", Tags=[{"Key": "b", "Value": "2"}])
    ssm.remove_tags_from_resource(ResourceType="Parameter", ResourceId="/tg", TagKeys=["a"])
    assert ssm.list_tags_for_resource(ResourceType="Parameter", ResourceId="/tg")["TagList"] == [{"Key": "b", "Value": "2"}]
    with pytest.raises(ClientError) as e:
        ssm.list_tags_for_resource(ResourceType="Parameter", ResourceId="/missing")
    assert error(e)[0] == "InvalidResourceId"


def test_parameters_are_isolated_per_region(client):
    client("ssm", region_name="us-east-1").put_parameter(Name="/r", Value="v", Type="String")
    with pytest.raises(ClientError) as e:
        client("ssm", region_name="eu-central-1").get_parameter(Name="/r")
    assert error(e)[0] == "ParameterNotFound"


def test_cli_puts_and_gets_a_secure_string(aws):
    aws("ssm", "put-parameter", "--name", "/cli/p", "--value", "cli-secret", "--type", "SecureString")
    out = json.loads(aws("ssm", "get-parameter", "--name", "/cli/p", "--with-decryption").stdout)
    assert out["Parameter"]["Value"] == "cli-secret"
    failed = aws("ssm", "get-parameter", "--name", "/cli/missing", check=False)
    assert failed.returncode != 0 and "ParameterNotFound" in failed.stderr
