"""Lambda settings deployment tools put and read back (recursion, runtime management,
provisioned concurrency, layer version permissions, resource policies by ARN), stored as put
and returned exactly, with Lambda's defaults; and the Lambda features Roto does not model
(capacity providers, durable executions) answered as for an account without them."""

from __future__ import annotations

import json

import pytest
from botocore.exceptions import ClientError

from lambda_helpers import ECHO_CODE, ROLE, zip_of

ARN = "arn:aws:lambda:us-east-1:000000000000:function:fn"



@pytest.fixture
def lam(client):
    lam = client("lambda")
    lam.create_function(FunctionName="fn", Runtime="python3.12", Role=ROLE, Handler="app.handler", Code=ECHO_CODE)
    return lam


def error_of(excinfo):
    err = excinfo.value.response["Error"]
    return err["Code"], err["Message"], excinfo.value.response["ResponseMetadata"]["HTTPStatusCode"]


def test_recursion_config_defaults_to_terminate_and_returns_what_was_put(lam):
    assert lam.get_function_recursion_config(FunctionName="fn")["RecursiveLoop"] == "Terminate"
    assert lam.put_function_recursion_config(FunctionName="fn", RecursiveLoop="Allow")["RecursiveLoop"] == "Allow"
    assert lam.get_function_recursion_config(FunctionName="fn")["RecursiveLoop"] == "Allow"


def test_recursion_config_of_a_missing_function_is_not_found(lam):
    with pytest.raises(ClientError) as e:
        lam.get_function_recursion_config(FunctionName="nope")
    assert error_of(e)[0] == "ResourceNotFoundException" and error_of(e)[2] == 404


def test_runtime_management_config_defaults_to_auto_and_keeps_a_manual_version(lam):
    got = lam.get_runtime_management_config(FunctionName="fn")
    assert got["UpdateRuntimeOn"] == "Auto" and got["FunctionArn"] == ARN and "RuntimeVersionArn" not in got
    version = "arn:aws:lambda:us-east-1::runtime:0123456789abcdef"
    put = lam.put_runtime_management_config(FunctionName="fn", UpdateRuntimeOn="Manual", RuntimeVersionArn=version)
    assert put["UpdateRuntimeOn"] == "Manual" and put["RuntimeVersionArn"] == version
    got = lam.get_runtime_management_config(FunctionName="fn")
    assert got["UpdateRuntimeOn"] == "Manual" and got["RuntimeVersionArn"] == version
    with pytest.raises(ClientError) as e:
        lam.put_runtime_management_config(FunctionName="fn", UpdateRuntimeOn="Manual")
    assert error_of(e)[0] == "InvalidParameterValueException"


def test_provisioned_concurrency_is_stored_per_version_and_listed(lam):
    version = lam.publish_version(FunctionName="fn")["Version"]
    with pytest.raises(ClientError) as e:
        lam.get_provisioned_concurrency_config(FunctionName="fn", Qualifier=version)
    assert error_of(e) == (
        "ProvisionedConcurrencyConfigNotFoundException",
        "No Provisioned Concurrency Config found for this function",
        404,
    )
    put = lam.put_provisioned_concurrency_config(FunctionName="fn", Qualifier=version, ProvisionedConcurrentExecutions=3)
    assert put["RequestedProvisionedConcurrentExecutions"] == 3 and put["Status"] == "IN_PROGRESS"
    got = lam.get_provisioned_concurrency_config(FunctionName="fn", Qualifier=version)
    assert got["Status"] == "READY" and got["AllocatedProvisionedConcurrentExecutions"] == 3
    listed = lam.list_provisioned_concurrency_configs(FunctionName="fn")["ProvisionedConcurrencyConfigs"]
    assert [c["FunctionArn"] for c in listed] == [f"{ARN}:{version}"]
    lam.delete_provisioned_concurrency_config(FunctionName="fn", Qualifier=version)
    assert lam.list_provisioned_concurrency_configs(FunctionName="fn")["ProvisionedConcurrencyConfigs"] == []


def test_provisioned_concurrency_on_latest_is_refused(lam):
    with pytest.raises(ClientError) as e:
        lam.put_provisioned_concurrency_config(FunctionName="fn", Qualifier="$LATEST", ProvisionedConcurrentExecutions=1)
    assert error_of(e)[0] == "InvalidParameterValueException"


def test_layer_version_permissions_are_kept_in_the_layer_policy(lam):
    layer = lam.publish_layer_version(LayerName="lib", Content={"ZipFile": zip_of({"x.py": ""})})
    number = layer["Version"]
    with pytest.raises(ClientError) as e:
        lam.get_layer_version_policy(LayerName="lib", VersionNumber=number)
    assert error_of(e)[0] == "ResourceNotFoundException"
    added = lam.add_layer_version_permission(
        LayerName="lib", VersionNumber=number, StatementId="all", Action="lambda:GetLayerVersion", Principal="*"
    )
    statement = json.loads(added["Statement"])
    assert statement["Sid"] == "all" and statement["Principal"] == "*"
    policy = json.loads(lam.get_layer_version_policy(LayerName="lib", VersionNumber=number)["Policy"])
    assert [s["Sid"] for s in policy["Statement"]] == ["all"]
    lam.remove_layer_version_permission(LayerName="lib", VersionNumber=number, StatementId="all")
    with pytest.raises(ClientError):
        lam.get_layer_version_policy(LayerName="lib", VersionNumber=number)


def test_invoke_async_answers_202(client, lam):
    got = lam.invoke_async(FunctionName="fn", InvokeArgs=b"{}")
    assert got["Status"] == 202


def test_features_roto_does_not_model_answer_as_for_an_account_without_them(lam):
    assert lam.list_capacity_providers()["CapacityProviders"] == []
    assert lam.list_durable_executions_by_function(FunctionName="fn")["DurableExecutions"] == []
    with pytest.raises(ClientError) as e:
        lam.get_capacity_provider(CapacityProviderName="cp")
    assert error_of(e)[0] == "ResourceNotFoundException" and error_of(e)[2] == 404
