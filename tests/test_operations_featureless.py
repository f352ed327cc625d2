"""Operations of features Roto does not model answer as AWS answers an account or resource
without the feature (empty lists, the documented not-found errors), never 501."""

from __future__ import annotations

import pytest
from botocore.exceptions import ClientError


def code_of(excinfo):
    return excinfo.value.response["Error"]["Code"], excinfo.value.response["ResponseMetadata"]["HTTPStatusCode"]


def test_dynamodb_global_tables_and_bulk_operations(client):
    ddb = client("dynamodb")
    assert ddb.list_global_tables()["GlobalTables"] == []
    assert ddb.list_bulk_operations()["BulkOperationsSummaryList"] == []
    with pytest.raises(ClientError) as e:
        ddb.describe_global_table(GlobalTableName="orders")
    assert code_of(e) == ("GlobalTableNotFoundException", 400)


def test_dynamodb_creates_no_legacy_global_table(client):
    ddb = client("dynamodb")
    schema = dict(
        BillingMode="PAY_PER_REQUEST",
        AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "S"}],
        KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}],
        StreamSpecification={"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"},
    )
    ddb.create_table(TableName="orders", **schema)
    client("dynamodb", region_name="us-west-2").create_table(TableName="orders", **schema)
    with pytest.raises(ClientError) as e:
        ddb.create_global_table(GlobalTableName="orders", ReplicationGroup=[
            {"RegionName": "us-east-1"}, {"RegionName": "us-west-2"}])
    assert code_of(e) == ("ValidationException", 400)
    assert e.value.response["Error"]["Message"] == (
        "One or more parameter values were invalid: DynamoDB global tables version 2017.11.29 is not "
        "supported. We recommend using DynamoDB global tables version 2019.11.21, instead of version "
        "2017.11.29 (Legacy).")
    assert ddb.list_global_tables()["GlobalTables"] == []
    with pytest.raises(ClientError) as e:
        ddb.update_global_table(GlobalTableName="orders", ReplicaUpdates=[
            {"Create": {"RegionName": "eu-west-1"}}])
    assert code_of(e) == ("GlobalTableNotFoundException", 400)


def test_dynamodb_replica_auto_scaling_of_a_table_without_replicas(client):
    ddb = client("dynamodb")
    ddb.create_table(
        TableName="orders",
        BillingMode="PAY_PER_REQUEST",
        AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "S"}],
        KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}],
    )
    # As in AWS, a regional table is no global table to describe.
    for name in ("orders", "missing"):
        with pytest.raises(ClientError) as e:
            ddb.describe_table_replica_auto_scaling(TableName=name)
        assert code_of(e) == ("ResourceNotFoundException", 400)


def test_events_endpoints_and_event_sources(client):
    events = client("events")
    assert events.list_endpoints()["Endpoints"] == []
    assert events.list_event_sources()["EventSources"] == []
    with pytest.raises(ClientError) as e:
        events.describe_endpoint(Name="ep")
    assert code_of(e)[0] == "ResourceNotFoundException"


def test_logs_ssm_iam_sns_s3_lists_are_empty(client):
    assert client("logs").describe_deliveries()["deliveries"] == []
    assert client("logs").list_log_anomaly_detectors()["anomalyDetectors"] == []
    assert client("ssm").describe_maintenance_windows()["WindowIdentities"] == []
    assert client("ssm").list_documents()["DocumentIdentifiers"] == []
    assert client("iam").list_delegation_requests()["DelegationRequests"] == []
    assert client("sns").list_sms_sandbox_phone_numbers()["PhoneNumbers"] == []
    assert client("s3").list_directory_buckets()["Buckets"] == []


def test_iam_delegation_requests_need_an_onboarded_partner(client):
    iam = client("iam")
    template = "arn:aws:iam::aws:delegation-template/partner/deploy"
    with pytest.raises(ClientError) as e:
        iam.create_delegation_request(
            Description="deploy the stack", Permissions={"PolicyTemplateArn": template},
            RequestorWorkflowId="workflow-1", NotificationChannel="arn:aws:sns:us-east-1:000000000000:t",
            SessionDuration=3600)
    assert code_of(e) == ("InvalidInput", 400)
    assert template in e.value.response["Error"]["Message"]
    assert iam.list_delegation_requests()["DelegationRequests"] == []


def test_outbound_web_identity_federation_is_disabled(client):
    with pytest.raises(ClientError) as e:
        client("iam").get_outbound_web_identity_federation_info()
    assert code_of(e) == ("FeatureDisabled", 404)
    with pytest.raises(ClientError) as e:
        client("sts").get_web_identity_token(Audience=["https://example.com"], SigningAlgorithm="RS256")
    assert code_of(e) == ("OutboundWebIdentityFederationDisabledException", 403)


def test_sns_data_protection_policy_is_stored_and_returned(client):
    sns = client("sns")
    arn = sns.create_topic(Name="t")["TopicArn"]
    assert sns.get_data_protection_policy(ResourceArn=arn)["DataProtectionPolicy"] == ""
    policy = '{"Name":"p","Version":"2021-06-01","Statement":[]}'
    sns.put_data_protection_policy(ResourceArn=arn, DataProtectionPolicy=policy)
    assert sns.get_data_protection_policy(ResourceArn=arn)["DataProtectionPolicy"] == policy
    assert sns.get_topic_attributes(TopicArn=arn)["Attributes"]["DataProtectionPolicy"] == policy
    with pytest.raises(ClientError) as e:
        sns.get_data_protection_policy(ResourceArn=arn + "-missing")
    assert code_of(e) == ("NotFound", 404)


def test_logs_deliveries_detectors_and_queries_are_not_found(client):
    logs = client("logs")
    assert logs.describe_account_policies(policyType="DATA_PROTECTION_POLICY")["accountPolicies"] == []
    calls = [
        lambda: logs.get_delivery(id="abc"),
        lambda: logs.get_delivery_source(name="src"),
        lambda: logs.get_delivery_destination(name="dst"),
        lambda: logs.get_delivery_destination_policy(deliveryDestinationName="dst"),
        lambda: logs.delete_delivery_source(name="src"),
        lambda: logs.get_log_anomaly_detector(anomalyDetectorArn="arn:aws:logs:us-east-1:000000000000:anomaly-detector:x"),
        lambda: logs.get_scheduled_query(identifier="q"),
        lambda: logs.delete_account_policy(policyName="p", policyType="DATA_PROTECTION_POLICY"),
    ]
    for call in calls:
        with pytest.raises(ClientError) as e:
            call()
        assert code_of(e) == ("ResourceNotFoundException", 400)
