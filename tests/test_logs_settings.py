"""CloudWatch Logs settings kept whole: data protection policies, transformers, field index
policies, account policies, the storage tier, DescribeFieldIndexes and
ListLogGroupsForQuery. What is put is read back exactly; a group without a setting answers
as AWS does."""

from __future__ import annotations

import json
import time

import pytest
from botocore.config import Config
from botocore.exceptions import ClientError

ACCOUNT = "000000000000"
MASKING = json.dumps({
    "Name": "data-protection",
    "Version": "2021-06-01",
    "Statement": [
        {"Sid": "audit", "DataIdentifier": ["arn:aws:dataprotection::aws:data-identifier/EmailAddress"],
         "Operation": {"Audit": {"FindingsDestination": {}}}},
        {"Sid": "redact", "DataIdentifier": ["arn:aws:dataprotection::aws:data-identifier/EmailAddress"],
         "Operation": {"Deidentify": {"MaskConfig": {}}}},
    ],
})
PROCESSORS = [
    {"parseJSON": {}},
    {"addKeys": {"entries": [{"key": "env", "value": "test", "overwriteIfExists": False}]}},
]


@pytest.fixture
def logs(client):
    logs = client("logs")
    logs.create_log_group(logGroupName="/app")
    return logs


def error_of(excinfo) -> tuple[str, str]:
    err = excinfo.value.response["Error"]
    return err["Code"], err["Message"]


def arn(name):
    return f"arn:aws:logs:us-east-1:{ACCOUNT}:log-group:{name}"


def test_data_protection_policy_is_put_read_and_deleted(logs):
    empty = logs.get_data_protection_policy(logGroupIdentifier="/app")
    assert empty["logGroupIdentifier"] == "/app"
    assert "policyDocument" not in empty
    put = logs.put_data_protection_policy(logGroupIdentifier="/app", policyDocument=MASKING)
    assert put["policyDocument"] == MASKING and put["lastUpdatedTime"] > 0
    got = logs.get_data_protection_policy(logGroupIdentifier=arn("/app"))
    assert got["policyDocument"] == MASKING
    assert got["lastUpdatedTime"] == put["lastUpdatedTime"]
    assert got["logGroupIdentifier"] == arn("/app")
    logs.delete_data_protection_policy(logGroupIdentifier="/app")
    assert "policyDocument" not in logs.get_data_protection_policy(logGroupIdentifier="/app")
    with pytest.raises(ClientError) as e:
        logs.delete_data_protection_policy(logGroupIdentifier="/app")
    assert error_of(e)[0] == "ResourceNotFoundException"


def test_data_protection_policy_errors(logs):
    with pytest.raises(ClientError) as e:
        logs.get_data_protection_policy(logGroupIdentifier="/missing")
    assert error_of(e) == ("ResourceNotFoundException", "The specified log group does not exist.")
    with pytest.raises(ClientError) as e:
        logs.put_data_protection_policy(logGroupIdentifier="/missing", policyDocument=MASKING)
    assert error_of(e)[0] == "ResourceNotFoundException"
    with pytest.raises(ClientError) as e:
        logs.put_data_protection_policy(logGroupIdentifier="/app", policyDocument="not json")
    assert error_of(e)[0] == "InvalidParameterException"


def unchecked(client):
    """A Logs client that sends what botocore would refuse, to see the server's answer."""
    return client("logs", config=Config(parameter_validation=False))


def test_transformer_is_put_read_and_deleted(logs, client):
    assert "transformerConfig" not in logs.get_transformer(logGroupIdentifier="/app")
    logs.put_transformer(logGroupIdentifier="/app", transformerConfig=PROCESSORS)
    first = logs.get_transformer(logGroupIdentifier="/app")
    assert first["transformerConfig"] == PROCESSORS
    assert first["logGroupIdentifier"] == "/app"
    assert first["creationTime"] == first["lastModifiedTime"]
    time.sleep(0.01)
    logs.put_transformer(logGroupIdentifier=arn("/app"), transformerConfig=PROCESSORS[:1])
    second = logs.get_transformer(logGroupIdentifier="/app")
    assert second["transformerConfig"] == PROCESSORS[:1]
    assert second["creationTime"] == first["creationTime"]
    assert second["lastModifiedTime"] >= first["lastModifiedTime"]
    logs.delete_transformer(logGroupIdentifier="/app")
    assert "transformerConfig" not in logs.get_transformer(logGroupIdentifier="/app")
    with pytest.raises(ClientError) as e:
        logs.delete_transformer(logGroupIdentifier="/app")
    assert error_of(e)[0] == "ResourceNotFoundException"
    with pytest.raises(ClientError) as e:
        logs.put_transformer(logGroupIdentifier="/missing", transformerConfig=PROCESSORS)
    assert error_of(e)[0] == "ResourceNotFoundException"
    with pytest.raises(ClientError) as e:
        unchecked(client).put_transformer(logGroupIdentifier="/app", transformerConfig=[])
    assert error_of(e)[0] == "InvalidParameterException"


def test_index_policies_are_put_described_and_deleted(logs):
    assert logs.describe_index_policies(logGroupIdentifiers=["/app"])["indexPolicies"] == []
    document = json.dumps({"Fields": ["RequestId", "TransactionId"]})
    put = logs.put_index_policy(logGroupIdentifier="/app", policyDocument=document)["indexPolicy"]
    assert put["policyDocument"] == document
    assert put["logGroupIdentifier"] == arn("/app") and put["source"] == "LOG_GROUP"
    [described] = logs.describe_index_policies(logGroupIdentifiers=[arn("/app")])["indexPolicies"]
    assert described == put
    logs.delete_index_policy(logGroupIdentifier="/app")
    assert logs.describe_index_policies(logGroupIdentifiers=["/app"])["indexPolicies"] == []
    with pytest.raises(ClientError) as e:
        logs.delete_index_policy(logGroupIdentifier="/app")
    assert error_of(e)[0] == "ResourceNotFoundException"
    with pytest.raises(ClientError) as e:
        logs.describe_index_policies(logGroupIdentifiers=["/missing"])
    assert error_of(e)[0] == "ResourceNotFoundException"
    with pytest.raises(ClientError) as e:
        logs.put_index_policy(logGroupIdentifier="/app", policyDocument="[")
    assert error_of(e)[0] == "InvalidParameterException"


def test_field_indexes_are_none_and_need_the_group(logs):
    assert logs.describe_field_indexes(logGroupIdentifiers=["/app"])["fieldIndexes"] == []
    with pytest.raises(ClientError) as e:
        logs.describe_field_indexes(logGroupIdentifiers=["/missing"])
    assert error_of(e)[0] == "ResourceNotFoundException"


def test_deleting_a_group_deletes_its_settings(logs):
    logs.put_data_protection_policy(logGroupIdentifier="/app", policyDocument=MASKING)
    logs.put_transformer(logGroupIdentifier="/app", transformerConfig=PROCESSORS)
    logs.delete_log_group(logGroupName="/app")
    logs.create_log_group(logGroupName="/app")
    assert "policyDocument" not in logs.get_data_protection_policy(logGroupIdentifier="/app")
    assert "transformerConfig" not in logs.get_transformer(logGroupIdentifier="/app")


def test_account_policies_are_put_described_and_deleted(logs):
    kind = "DATA_PROTECTION_POLICY"
    assert logs.describe_account_policies(policyType=kind)["accountPolicies"] == []
    policy = logs.put_account_policy(policyName="mask", policyDocument=MASKING, policyType=kind,
                                     scope="ALL")["accountPolicy"]
    assert policy["policyName"] == "mask" and policy["accountId"] == ACCOUNT
    assert policy["policyDocument"] == MASKING and policy["scope"] == "ALL"
    subscription = json.dumps({"DestinationArn": "arn:aws:lambda:us-east-1:000000000000:function:f",
                               "FilterPattern": ""})
    logs.put_account_policy(policyName="sub", policyDocument=subscription,
                            policyType="SUBSCRIPTION_FILTER_POLICY", selectionCriteria='LogGroupName NOT IN ["/x"]')
    assert logs.describe_account_policies(policyType=kind)["accountPolicies"] == [policy]
    [sub] = logs.describe_account_policies(policyType="SUBSCRIPTION_FILTER_POLICY",
                                           policyName="sub")["accountPolicies"]
    assert sub["selectionCriteria"] == 'LogGroupName NOT IN ["/x"]'
    assert logs.describe_account_policies(policyType=kind, policyName="other")["accountPolicies"] == []
    logs.delete_account_policy(policyName="mask", policyType=kind)
    assert logs.describe_account_policies(policyType=kind)["accountPolicies"] == []
    with pytest.raises(ClientError) as e:
        logs.delete_account_policy(policyName="mask", policyType=kind)
    assert error_of(e) == ("ResourceNotFoundException", "Policy with name [mask] does not exist")
    with pytest.raises(ClientError) as e:
        logs.put_account_policy(policyName="bad", policyDocument="nope", policyType=kind)
    assert error_of(e)[0] == "InvalidParameterException"


def test_storage_tier_defaults_to_standard_and_keeps_what_is_put(logs, client):
    assert logs.get_storage_tier_policy()["storageTier"] == "STANDARD"
    put = logs.put_storage_tier_policy(storageTier="INTELLIGENT_TIERING")
    got = logs.get_storage_tier_policy()
    assert got["storageTier"] == "INTELLIGENT_TIERING"
    assert got["lastUpdatedTime"] == put["lastUpdatedTime"]
    with pytest.raises(ClientError) as e:
        unchecked(client).put_storage_tier_policy(storageTier="COLD")
    assert error_of(e)[0] == "InvalidParameterException"


def test_log_groups_for_query_lists_the_searched_groups(logs):
    logs.create_log_group(logGroupName="/other")
    now = int(time.time())
    query = logs.start_query(logGroupNames=["/app", "/other"], queryString="fields @message",
                             startTime=now - 60, endTime=now)["queryId"]
    listed = logs.list_log_groups_for_query(queryId=query)["logGroupIdentifiers"]
    assert sorted(listed) == [arn("/app"), arn("/other")]
    with pytest.raises(ClientError) as e:
        logs.list_log_groups_for_query(queryId="00000000-0000-0000-0000-000000000000")
    assert error_of(e) == ("ResourceNotFoundException", "The specified query does not exist.")
