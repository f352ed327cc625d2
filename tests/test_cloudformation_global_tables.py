"""CloudFormation's AWS::DynamoDB::GlobalTable through boto3: the table in the stack's region and
a replica in every other region of its Replicas, each replica's regional settings, replicas
added and removed by an update, the resource's Ref and GetAtt values, and deletion."""

from __future__ import annotations

import json

import pytest
from botocore.exceptions import ClientError

from test_cloudformation_service_types import gone, outputs_of
from test_cloudformation_types import deploy, failure, update

HOME, OTHER, THIRD = "us-east-1", "eu-west-1", "ap-southeast-2"


@pytest.fixture
def cfn(client):
    return client("cloudformation", region_name=HOME)


def global_table(replicas, **extra):
    props = {
        "TableName": "orders",
        "BillingMode": "PAY_PER_REQUEST",
        "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}],
        "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
        "StreamSpecification": {"StreamViewType": "NEW_AND_OLD_IMAGES"},
        "Replicas": replicas,
        **extra,
    }
    return {"Type": "AWS::DynamoDB::GlobalTable", "Properties": props}


def template(replicas, **extra):
    return outputs_of({"Table": global_table(replicas, **extra)}, {
        "Name": {"Ref": "Table"}, "Arn": {"Fn::GetAtt": ["Table", "Arn"]},
        "StreamArn": {"Fn::GetAtt": ["Table", "StreamArn"]}, "TableId": {"Fn::GetAtt": ["Table", "TableId"]}})


def test_a_global_table_has_a_replica_in_each_region(cfn, client):
    replicas = [
        {"Region": HOME, "PointInTimeRecoverySpecification": {"PointInTimeRecoveryEnabled": True},
         "Tags": [{"Key": "team", "Value": "home"}]},
        {"Region": OTHER, "DeletionProtectionEnabled": True, "TableClass": "STANDARD_INFREQUENT_ACCESS",
         "Tags": [{"Key": "team", "Value": "other"}]},
    ]
    _, out = deploy(cfn, "global", template(replicas, TimeToLiveSpecification={
        "Enabled": True, "AttributeName": "expires"}))
    home, other = client("dynamodb", region_name=HOME), client("dynamodb", region_name=OTHER)
    table = home.describe_table(TableName="orders")["Table"]
    assert out == {"Name": "orders", "Arn": table["TableArn"], "StreamArn": table["LatestStreamArn"],
                   "TableId": table["TableId"]}
    assert table["GlobalTableVersion"] == "2019.11.21"
    assert [r["RegionName"] for r in table["Replicas"]] == [OTHER]
    replica = other.describe_table(TableName="orders")["Table"]
    assert replica["DeletionProtectionEnabled"] is True
    assert replica["TableClassSummary"]["TableClass"] == "STANDARD_INFREQUENT_ACCESS"
    assert other.describe_time_to_live(TableName="orders")["TimeToLiveDescription"]["AttributeName"] == "expires"
    assert home.describe_continuous_backups(TableName="orders")["ContinuousBackupsDescription"][
        "PointInTimeRecoveryDescription"]["PointInTimeRecoveryStatus"] == "ENABLED"
    assert home.list_tags_of_resource(ResourceArn=table["TableArn"])["Tags"] == [{"Key": "team", "Value": "home"}]
    assert other.list_tags_of_resource(ResourceArn=replica["TableArn"])["Tags"] == [
        {"Key": "team", "Value": "other"}]

    # An update adds and removes replicas (deletion protection lifted first, as AWS needs).
    update(cfn, "global", template([{"Region": HOME}, {"Region": OTHER, "DeletionProtectionEnabled": False},
                                    {"Region": THIRD}]))
    assert [r["RegionName"] for r in home.describe_table(TableName="orders")["Table"]["Replicas"]] == [OTHER, THIRD]
    update(cfn, "global", template([{"Region": HOME}, {"Region": THIRD}]))
    assert [r["RegionName"] for r in home.describe_table(TableName="orders")["Table"]["Replicas"]] == [THIRD]
    with pytest.raises(ClientError):
        other.describe_table(TableName="orders")

    gone(cfn, "global")
    for region in (HOME, THIRD):
        with pytest.raises(ClientError) as excinfo:
            client("dynamodb", region_name=region).describe_table(TableName="orders")
        assert excinfo.value.response["Error"]["Code"] == "ResourceNotFoundException"


def test_the_replicas_must_name_the_stacks_region(cfn):
    cfn.create_stack(StackName="elsewhere", TemplateBody=json.dumps(
        template([{"Region": OTHER}])))
    assert failure(cfn, "elsewhere", "Table") == (
        "Invalid request provided: The Replicas section must contain an entry for the current region")


def test_a_provisioned_global_table_with_replicas_fails_with_dynamodbs_error(cfn):
    cfn.create_stack(StackName="fixed", TemplateBody=json.dumps(template(
        [{"Region": HOME}, {"Region": OTHER}], BillingMode="PROVISIONED",
        WriteProvisionedThroughputSettings={"WriteCapacityAutoScalingSettings": {
            "MinCapacity": 1, "MaxCapacity": 10,
            "TargetTrackingScalingPolicyConfiguration": {"TargetValue": 70}}})))
    assert "Table write capacity should either be Pay-Per-Request or AutoScaled." in failure(cfn, "fixed", "Table")
