"""EventBridge connections and API destinations: stored with AWS's shapes and states,
credentials never returned, names unique, API destinations tied to existing connections."""

from __future__ import annotations

import pytest
from botocore.exceptions import ClientError


@pytest.fixture
def events(client):
    return client("events")


def error(excinfo):
    r = excinfo.value.response
    return r["Error"]["Code"], r["Error"]["Message"], r["ResponseMetadata"]["HTTPStatusCode"]


def basic(events, name="crm"):
    return events.create_connection(
        Name=name,
        Description="the CRM",
        AuthorizationType="BASIC",
        AuthParameters={
            "BasicAuthParameters": {"Username": "shop", "Password": "hunter2"},
            "InvocationHttpParameters": {"HeaderParameters": [
                {"Key": "X-Tenant", "Value": "t-1", "IsValueSecret": False},
                {"Key": "X-Signature", "Value": "s3cret", "IsValueSecret": True},
            ]},
        },
    )


def test_connections_are_stored_without_returning_secrets(events):
    created = basic(events)
    arn = created["ConnectionArn"]
    assert arn.startswith("arn:aws:events:us-east-1:000000000000:connection/crm/")
    assert created["ConnectionState"] == "AUTHORIZED"
    described = events.describe_connection(Name="crm")
    assert described["ConnectionArn"] == arn
    assert described["Name"] == "crm"
    assert described["Description"] == "the CRM"
    assert described["AuthorizationType"] == "BASIC"
    assert described["SecretArn"].startswith("arn:aws:secretsmanager:us-east-1:000000000000:secret:events!connection/crm/")
    assert events.describe_connection(Name="crm")["SecretArn"] == described["SecretArn"]
    auth = described["AuthParameters"]
    assert auth["BasicAuthParameters"] == {"Username": "shop"}
    headers = auth["InvocationHttpParameters"]["HeaderParameters"]
    assert headers == [
        {"Key": "X-Tenant", "Value": "t-1", "IsValueSecret": False},
        {"Key": "X-Signature", "IsValueSecret": True},
    ]
    assert "hunter2" not in str(described) and "s3cret" not in str(described)


def test_connection_lifecycle_and_listing(events):
    basic(events, "crm")
    events.create_connection(Name="payments", AuthorizationType="API_KEY",
                             AuthParameters={"ApiKeyAuthParameters": {"ApiKeyName": "x-api-key", "ApiKeyValue": "k"}})
    names = [c["Name"] for c in events.list_connections()["Connections"]]
    assert names == ["crm", "payments"]
    assert [c["Name"] for c in events.list_connections(NamePrefix="pay")["Connections"]] == ["payments"]
    page = events.list_connections(Limit=1)
    assert len(page["Connections"]) == 1 and "NextToken" in page
    rest = events.list_connections(Limit=1, NextToken=page["NextToken"])
    assert [c["Name"] for c in rest["Connections"]] == ["payments"]

    updated = events.update_connection(Name="crm", Description="new", AuthorizationType="BASIC",
                                       AuthParameters={"BasicAuthParameters": {"Username": "ops", "Password": "p"}})
    assert updated["ConnectionState"] == "AUTHORIZED"
    described = events.describe_connection(Name="crm")
    assert described["Description"] == "new"
    assert described["AuthParameters"]["BasicAuthParameters"] == {"Username": "ops"}

    assert events.deauthorize_connection(Name="crm")["ConnectionState"] == "DEAUTHORIZING"
    assert events.describe_connection(Name="crm")["ConnectionState"] == "DEAUTHORIZED"
    assert [c["Name"] for c in events.list_connections(ConnectionState="DEAUTHORIZED")["Connections"]] == ["crm"]

    assert events.delete_connection(Name="crm")["ConnectionState"] == "DELETING"
    with pytest.raises(ClientError) as e:
        events.describe_connection(Name="crm")
    assert error(e) == ("ResourceNotFoundException", "Connection 'crm' does not exist.", 400)


def test_connection_errors(events):
    basic(events)
    with pytest.raises(ClientError) as e:
        basic(events)
    assert error(e) == ("ResourceAlreadyExistsException", "Connection 'crm' already exists.", 400)
    with pytest.raises(ClientError) as e:
        events.create_connection(Name="bare", AuthorizationType="API_KEY", AuthParameters={})
    assert error(e)[0] == "ValidationException"
    with pytest.raises(ClientError) as e:
        events.create_connection(Name="bad name", AuthorizationType="BASIC",
                                 AuthParameters={"BasicAuthParameters": {"Username": "u", "Password": "p"}})
    assert error(e)[0] == "ValidationException"
    with pytest.raises(ClientError) as e:
        events.delete_connection(Name="gone")
    assert error(e)[0] == "ResourceNotFoundException"


def test_api_destinations(events):
    connection = basic(events)["ConnectionArn"]
    created = events.create_api_destination(Name="crm-orders", ConnectionArn=connection,
                                            InvocationEndpoint="https://crm.example/orders", HttpMethod="POST")
    arn = created["ApiDestinationArn"]
    assert arn.startswith("arn:aws:events:us-east-1:000000000000:api-destination/crm-orders/")
    assert created["ApiDestinationState"] == "ACTIVE"
    described = events.describe_api_destination(Name="crm-orders")
    assert described["ConnectionArn"] == connection
    assert described["InvocationEndpoint"] == "https://crm.example/orders"
    assert described["HttpMethod"] == "POST"
    assert described["InvocationRateLimitPerSecond"] == 300

    events.update_api_destination(Name="crm-orders", HttpMethod="PUT", InvocationRateLimitPerSecond=10)
    described = events.describe_api_destination(Name="crm-orders")
    assert (described["HttpMethod"], described["InvocationRateLimitPerSecond"]) == ("PUT", 10)
    listed = events.list_api_destinations(ConnectionArn=connection)["ApiDestinations"]
    assert [d["Name"] for d in listed] == ["crm-orders"]
    assert events.list_api_destinations(NamePrefix="other")["ApiDestinations"] == []

    with pytest.raises(ClientError) as e:
        events.create_api_destination(Name="crm-orders", ConnectionArn=connection,
                                      InvocationEndpoint="https://x", HttpMethod="POST")
    assert error(e)[0] == "ResourceAlreadyExistsException"
    with pytest.raises(ClientError) as e:
        events.create_api_destination(Name="orphan", ConnectionArn=connection.replace("crm/", "nope/"),
                                      InvocationEndpoint="https://x", HttpMethod="POST")
    assert error(e)[0] == "ResourceNotFoundException"

    events.delete_api_destination(Name="crm-orders")
    with pytest.raises(ClientError) as e:
        events.describe_api_destination(Name="crm-orders")
    assert error(e) == ("ResourceNotFoundException", "An api-destination 'crm-orders' does not exist.", 400)
