"""Operations of features an ordinary account does not have, or that Roto keeps in one
account, answered as AWS answers them: EventBridge's SaaS-partner operations, DynamoDB's
vector search and replica auto scaling, Secrets Manager's cross-account replicas and its
list of resource policies."""

from __future__ import annotations

import json

import pytest
from botocore.exceptions import ClientError


def error_of(excinfo):
    err = excinfo.value.response
    return err["Error"]["Code"], err["ResponseMetadata"]["HTTPStatusCode"]


def test_partner_operations_are_disabled_for_customer_accounts(client):
    events = client("events")
    calls = [
        lambda: events.create_partner_event_source(Name="aws.partner/acme/orders", Account="111122223333"),
        lambda: events.list_partner_event_sources(NamePrefix="aws.partner/acme/"),
        lambda: events.put_partner_events(Entries=[{"Source": "aws.partner/acme/orders", "Detail": "{}",
                                                    "DetailType": "x"}]),
    ]
    for call in calls:
        with pytest.raises(ClientError) as e:
            call()
        assert error_of(e) == ("OperationDisabledException", 400)


@pytest.fixture
def table(client):
    ddb = client("dynamodb")
    ddb.create_table(
        TableName="docs",
        BillingMode="PAY_PER_REQUEST",
        AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "S"}],
        KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}],
    )
    return ddb


VECTOR = [{"N": "0.5"}, {"N": "0.25"}]


def test_a_table_without_vector_indexes_has_none_to_search(table):
    with pytest.raises(ClientError) as e:
        table.search_vectors(TableName="docs", IndexName="embeddings",
                             SearchVector=VECTOR, TopK=1)
    assert error_of(e) == ("ResourceNotFoundException", 400)
    with pytest.raises(ClientError) as e:
        table.search_vectors(TableName="missing", IndexName="embeddings",
                             SearchVector=VECTOR, TopK=1)
    assert error_of(e) == ("ResourceNotFoundException", 400)


def test_replica_auto_scaling_updates_of_a_table_without_replicas(table):
    # As in AWS, a regional table is no global table to update.
    for name in ("docs", "missing"):
        with pytest.raises(ClientError) as e:
            table.update_table_replica_auto_scaling(TableName=name)
        assert error_of(e) == ("ResourceNotFoundException", 400)


def test_a_secret_lists_its_default_policy_once_it_has_one(client):
    sm = client("secretsmanager")
    sm.create_secret(Name="db", SecretString="pw")
    assert sm.list_resource_policies(SecretId="db")["ResourcePolicies"] == []
    policy = json.dumps({"Version": "2012-10-17", "Statement": [{
        "Effect": "Allow", "Principal": {"AWS": "arn:aws:iam::111122223333:root"},
        "Action": "secretsmanager:GetSecretValue", "Resource": "*"}]})
    sm.put_resource_policy(SecretId="db", ResourcePolicy=policy)
    assert sm.list_resource_policies(SecretId="db")["ResourcePolicies"] == [{"PolicyName": "default"}]
    sm.delete_resource_policy(SecretId="db")
    assert sm.list_resource_policies(SecretId="db")["ResourcePolicies"] == []
    with pytest.raises(ClientError) as e:
        sm.list_resource_policies(SecretId="missing")
    assert error_of(e) == ("ResourceNotFoundException", 400)


def test_cross_account_replicas_are_not_found(client):
    sm = client("secretsmanager")
    sm.create_secret(Name="db", SecretString="pw")
    replica = "arn:aws:secretsmanager:us-east-1:111122223333:secret:db-AbCdEf"
    for call in (sm.associate_cross_account_replica, sm.disassociate_cross_account_replica):
        with pytest.raises(ClientError) as e:
            call(SecretId="db", CrossAccountReplicaARN=replica)
        assert error_of(e) == ("ResourceNotFoundException", 400)
        assert "111122223333" in e.value.response["Error"]["Message"]
        with pytest.raises(ClientError) as e:
            call(SecretId="missing", CrossAccountReplicaARN=replica)
        assert e.value.response["Error"]["Message"] == "Secrets Manager can't find the specified secret."


BUSES = [{"EventBusArn": "arn:aws:events:us-east-1:000000000000:event-bus/orders"},
         {"EventBusArn": "arn:aws:events:us-west-2:000000000000:event-bus/orders"}]
ROUTING = {"FailoverConfig": {"Primary": {"HealthCheck": "arn:aws:route53:::healthcheck/abc"},
                              "Secondary": {"Route": "us-west-2"}}}


def test_global_endpoints_are_stored_listed_updated_and_deleted(client):
    events = client("events")
    created = events.create_endpoint(Name="orders", RoutingConfig=ROUTING, EventBuses=BUSES)
    assert created["State"] == "ACTIVE" and created["Arn"].endswith(":endpoint/orders")
    assert created["ReplicationConfig"] == {"State": "ENABLED"}
    got = events.describe_endpoint(Name="orders")
    assert got["EventBuses"] == BUSES and got["RoutingConfig"] == ROUTING
    assert got["EndpointUrl"] == f"https://{got['EndpointId']}.endpoint.events.amazonaws.com"
    events.update_endpoint(Name="orders", Description="failover", ReplicationConfig={"State": "DISABLED"})
    got = events.describe_endpoint(Name="orders")
    assert got["Description"] == "failover" and got["ReplicationConfig"] == {"State": "DISABLED"}
    assert [e["Name"] for e in events.list_endpoints(NamePrefix="ord")["Endpoints"]] == ["orders"]
    assert events.list_endpoints(NamePrefix="x")["Endpoints"] == []
    with pytest.raises(ClientError) as e:
        events.create_endpoint(Name="orders", RoutingConfig=ROUTING, EventBuses=BUSES)
    assert error_of(e) == ("ResourceAlreadyExistsException", 400)
    with pytest.raises(ClientError) as e:
        events.create_endpoint(Name="same-region", RoutingConfig=ROUTING, EventBuses=[BUSES[0], BUSES[0]])
    assert error_of(e) == ("ValidationException", 400)
    events.delete_endpoint(Name="orders")
    with pytest.raises(ClientError) as e:
        events.describe_endpoint(Name="orders")
    assert error_of(e) == ("ResourceNotFoundException", 400)
    with pytest.raises(ClientError) as e:
        events.delete_endpoint(Name="orders")
    assert error_of(e) == ("ResourceNotFoundException", 400)


def test_sms_sandbox_numbers_are_added_verified_listed_and_deleted(client):
    sns = client("sns")
    sns.create_sms_sandbox_phone_number(PhoneNumber="+14155550100")
    assert sns.list_sms_sandbox_phone_numbers()["PhoneNumbers"] == [
        {"PhoneNumber": "+14155550100", "Status": "Pending"}]
    sns.verify_sms_sandbox_phone_number(PhoneNumber="+14155550100", OneTimePassword="123456")
    assert sns.list_sms_sandbox_phone_numbers()["PhoneNumbers"][0]["Status"] == "Verified"
    with pytest.raises(ClientError) as e:
        sns.create_sms_sandbox_phone_number(PhoneNumber="12")
    assert error_of(e) == ("InvalidParameter", 400)
    with pytest.raises(ClientError) as e:
        sns.verify_sms_sandbox_phone_number(PhoneNumber="+14155550199", OneTimePassword="123456")
    assert error_of(e) == ("ResourceNotFound", 404)
    sns.delete_sms_sandbox_phone_number(PhoneNumber="+14155550100")
    assert sns.list_sms_sandbox_phone_numbers()["PhoneNumbers"] == []
    with pytest.raises(ClientError) as e:
        sns.delete_sms_sandbox_phone_number(PhoneNumber="+14155550100")
    assert error_of(e) == ("ResourceNotFound", 404)
