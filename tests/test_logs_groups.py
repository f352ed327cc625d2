"""CloudWatch Logs log-group settings: KMS keys, log classes, deletion protection,
DescribeLogGroups' identifiers and account filters, and ListLogGroups."""

from __future__ import annotations

import pytest
from botocore.exceptions import ClientError

ACCOUNT = "000000000000"
KEY = f"arn:aws:kms:us-east-1:{ACCOUNT}:key/1234abcd-12ab-34cd-56ef-1234567890ab"


@pytest.fixture
def logs(client):
    return client("logs")


def error_of(excinfo) -> tuple[str, str]:
    err = excinfo.value.response["Error"]
    return err["Code"], err["Message"]


def arn(name):
    return f"arn:aws:logs:us-east-1:{ACCOUNT}:log-group:{name}"


def test_kms_keys_are_associated_and_disassociated(logs):
    logs.create_log_group(logGroupName="/app")
    logs.associate_kms_key(logGroupName="/app", kmsKeyId=KEY)
    assert logs.describe_log_groups()["logGroups"][0]["kmsKeyId"] == KEY
    logs.disassociate_kms_key(logGroupName="/app")
    assert "kmsKeyId" not in logs.describe_log_groups()["logGroups"][0]
    logs.associate_kms_key(resourceIdentifier=arn("/app"), kmsKeyId=KEY)
    assert logs.describe_log_groups()["logGroups"][0]["kmsKeyId"] == KEY
    with pytest.raises(ClientError) as e:
        logs.associate_kms_key(logGroupName="/missing", kmsKeyId=KEY)
    assert error_of(e) == ("ResourceNotFoundException", "The specified log group does not exist.")
    with pytest.raises(ClientError) as e:
        logs.disassociate_kms_key()
    assert error_of(e)[0] == "InvalidParameterException"


def test_deletion_protection_blocks_deleting_the_group_and_its_streams(logs):
    logs.create_log_group(logGroupName="/kept", deletionProtectionEnabled=True)
    logs.create_log_stream(logGroupName="/kept", logStreamName="s")
    assert logs.describe_log_groups()["logGroups"][0]["deletionProtectionEnabled"] is True
    message = "Cannot delete log group with deletion protection enabled. Disable deletion protection first."
    with pytest.raises(ClientError) as e:
        logs.delete_log_group(logGroupName="/kept")
    assert error_of(e) == ("ValidationException", message)
    with pytest.raises(ClientError) as e:
        logs.delete_log_stream(logGroupName="/kept", logStreamName="s")
    assert error_of(e)[0] == "ValidationException"
    logs.put_log_group_deletion_protection(logGroupIdentifier=arn("/kept"), deletionProtectionEnabled=False)
    assert logs.describe_log_groups()["logGroups"][0]["deletionProtectionEnabled"] is False
    logs.delete_log_group(logGroupName="/kept")
    with pytest.raises(ClientError) as e:
        logs.put_log_group_deletion_protection(logGroupIdentifier="/kept", deletionProtectionEnabled=True)
    assert error_of(e)[0] == "ResourceNotFoundException"


def test_infrequent_access_groups_have_no_metric_or_subscription_filters(logs):
    logs.create_log_group(logGroupName="/ia", logGroupClass="INFREQUENT_ACCESS")
    logs.create_log_group(logGroupName="/std")
    classes = {g["logGroupName"]: g["logGroupClass"] for g in logs.describe_log_groups()["logGroups"]}
    assert classes == {"/ia": "INFREQUENT_ACCESS", "/std": "STANDARD"}
    assert [g["logGroupName"] for g in logs.describe_log_groups(logGroupClass="INFREQUENT_ACCESS")["logGroups"]] == ["/ia"]
    message = "This operation is only supported on the Standard log class."
    with pytest.raises(ClientError) as e:
        logs.put_metric_filter(logGroupName="/ia", filterName="f", filterPattern="ERROR", metricTransformations=[
            {"metricName": "Errors", "metricNamespace": "App", "metricValue": "1"}])
    assert error_of(e) == ("ValidationException", message)
    with pytest.raises(ClientError) as e:
        logs.put_subscription_filter(logGroupName="/ia", filterName="f", filterPattern="",
                                     destinationArn=f"arn:aws:lambda:us-east-1:{ACCOUNT}:function:f")
    assert error_of(e) == ("ValidationException", message)
    with pytest.raises(ClientError) as e:
        logs.describe_subscription_filters(logGroupName="/ia")
    assert error_of(e) == ("ValidationException", message)
    with pytest.raises(ClientError) as e:
        logs.create_log_group(logGroupName="/bad", logGroupClass="SOMETIMES")
    assert error_of(e)[0] == "InvalidParameterException"


def test_describe_log_groups_by_identifiers_and_accounts(logs):
    for name in ["/a", "/b", "/c"]:
        logs.create_log_group(logGroupName=name)
    got = logs.describe_log_groups(logGroupIdentifiers=[arn("/c"), "/a"])["logGroups"]
    assert [g["logGroupName"] for g in got] == ["/a", "/c"]
    assert len(logs.describe_log_groups(accountIdentifiers=[ACCOUNT])["logGroups"]) == 3
    assert logs.describe_log_groups(accountIdentifiers=["111111111111"])["logGroups"] == []
    with pytest.raises(ClientError) as e:
        logs.describe_log_groups(logGroupIdentifiers=["/a"], logGroupNamePrefix="/")
    assert error_of(e)[0] == "InvalidParameterException"


def test_list_log_groups_matches_patterns_and_paginates(logs):
    names = ["/aws/lambda/one", "/aws/lambda/two", "/app/discovery", "/app/web", "/other"]
    for name in names:
        logs.create_log_group(logGroupName=name)
    logs.create_log_group(logGroupName="/app/cold", logGroupClass="INFREQUENT_ACCESS")
    every = logs.list_log_groups()["logGroups"]
    assert [g["logGroupName"] for g in every] == sorted(names + ["/app/cold"])
    assert every[0] == {"logGroupName": "/app/cold", "logGroupArn": arn("/app/cold"), "logGroupClass": "INFREQUENT_ACCESS"}
    matched = logs.list_log_groups(logGroupNamePattern="^/aws/lambda|discovery")["logGroups"]
    assert [g["logGroupName"] for g in matched] == ["/app/discovery", "/aws/lambda/one", "/aws/lambda/two"]
    assert logs.list_log_groups(logGroupNamePattern="LAMBDA")["logGroups"] == []
    standard = logs.list_log_groups(logGroupClass="STANDARD", limit=2)
    assert len(standard["logGroups"]) == 2
    rest = logs.list_log_groups(logGroupClass="STANDARD", limit=10, nextToken=standard["nextToken"])
    assert len(rest["logGroups"]) == 3 and "nextToken" not in rest
    with pytest.raises(ClientError) as e:
        logs.list_log_groups(logGroupNamePattern="one|two|six|ten|abc|xyz")
    assert error_of(e)[0] == "InvalidParameterException"
    assert "logGroupNamePattern" in error_of(e)[1]
    with pytest.raises(ClientError) as e:
        logs.list_log_groups(limit=1001)
    assert error_of(e)[0] == "InvalidParameterException"
