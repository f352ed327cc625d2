"""DynamoDB's stored settings through boto3: Contributor Insights (Kinesis streaming
destinations are in test_dynamodb_kinesis.py)."""

from __future__ import annotations

import re
from datetime import datetime

import pytest
from botocore.exceptions import ClientError


def fails(call, **params):
    with pytest.raises(ClientError) as excinfo:
        call(**params)
    err = excinfo.value.response["Error"]
    return err["Code"], err["Message"]


def make_table(db, name="tbl"):
    return db.create_table(
        TableName=name,
        AttributeDefinitions=[
            {"AttributeName": "pk", "AttributeType": "S"},
            {"AttributeName": "sk", "AttributeType": "S"},
            {"AttributeName": "g", "AttributeType": "S"},
        ],
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
        GlobalSecondaryIndexes=[{
            "IndexName": "by-g",
            "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
            "Projection": {"ProjectionType": "ALL"},
        }],
        LocalSecondaryIndexes=[{
            "IndexName": "by-g-local",
            "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "g", "KeyType": "RANGE"}],
            "Projection": {"ProjectionType": "ALL"},
        }],
        BillingMode="PAY_PER_REQUEST",
    )["TableDescription"]


# Contributor Insights

def test_contributor_insights_start_disabled_and_enable_with_rules(client):
    db = client("dynamodb")
    make_table(db)
    assert db.describe_contributor_insights(TableName="tbl")["ContributorInsightsStatus"] == "DISABLED"
    updated = db.update_contributor_insights(TableName="tbl", ContributorInsightsAction="ENABLE")
    assert updated["TableName"] == "tbl"
    assert updated["ContributorInsightsStatus"] == "ENABLING"
    assert updated["ContributorInsightsMode"] == "ACCESSED_AND_THROTTLED_KEYS"
    described = db.describe_contributor_insights(TableName="tbl")
    assert described["ContributorInsightsStatus"] == "ENABLED"
    assert isinstance(described["LastUpdateDateTime"], datetime)
    rules = described["ContributorInsightsRuleList"]
    assert [r.split("-")[1] for r in rules] == ["PKC", "SKC", "PKT", "SKT"]
    assert all(re.fullmatch(r"DynamoDBContributorInsights-[A-Z]{3}-tbl-\d{13}", r) for r in rules)

    db.update_contributor_insights(TableName="tbl", IndexName="by-g", ContributorInsightsAction="ENABLE",
                                   ContributorInsightsMode="THROTTLED_KEYS")
    index = db.describe_contributor_insights(TableName="tbl", IndexName="by-g")
    assert index["IndexName"] == "by-g"
    assert index["ContributorInsightsMode"] == "THROTTLED_KEYS"
    # The index has no sort key, and throttled keys only.
    assert [r.split("-")[1] for r in index["ContributorInsightsRuleList"]] == ["PKT"]

    disabled = db.update_contributor_insights(TableName="tbl", ContributorInsightsAction="DISABLE")
    assert disabled["ContributorInsightsStatus"] == "DISABLING"
    after = db.describe_contributor_insights(TableName="tbl")
    assert after["ContributorInsightsStatus"] == "DISABLED"
    assert "ContributorInsightsRuleList" not in after


def test_list_contributor_insights_covers_a_table_and_its_global_indexes(client):
    db = client("dynamodb")
    make_table(db, "one")
    make_table(db, "two")
    db.update_contributor_insights(TableName="one", IndexName="by-g", ContributorInsightsAction="ENABLE")
    db.update_contributor_insights(TableName="two", ContributorInsightsAction="ENABLE")
    one = db.list_contributor_insights(TableName="one")["ContributorInsightsSummaries"]
    assert one == [
        {"TableName": "one", "ContributorInsightsStatus": "DISABLED"},
        {"TableName": "one", "IndexName": "by-g", "ContributorInsightsStatus": "ENABLED",
         "ContributorInsightsMode": "ACCESSED_AND_THROTTLED_KEYS"},
    ]
    every = db.list_contributor_insights()["ContributorInsightsSummaries"]
    assert [(s["TableName"], s.get("IndexName")) for s in every] == [("one", "by-g"), ("two", None)]
    page = db.list_contributor_insights(MaxResults=1)
    assert len(page["ContributorInsightsSummaries"]) == 1
    rest = db.list_contributor_insights(MaxResults=1, NextToken=page["NextToken"])
    assert rest["ContributorInsightsSummaries"][0]["TableName"] == "two"
    assert "NextToken" not in rest


def test_contributor_insights_refusals(client):
    db = client("dynamodb")
    for call, params in ((db.describe_contributor_insights, {}),
                         (db.update_contributor_insights, {"ContributorInsightsAction": "ENABLE"}),
                         (db.list_contributor_insights, {})):
        assert fails(call, TableName="nope", **params) == (
            "ResourceNotFoundException", "Requested resource not found: Table: nope not found")
    make_table(db)
    for index in ("missing", "by-g-local"):
        assert fails(db.describe_contributor_insights, TableName="tbl", IndexName=index)[0] == (
            "ResourceNotFoundException")
    assert fails(db.update_contributor_insights, TableName="tbl", ContributorInsightsAction="PAUSE")[0] == (
        "ValidationException")


def test_a_deleted_table_forgets_its_insights(client):
    db = client("dynamodb")
    make_table(db)
    db.update_contributor_insights(TableName="tbl", ContributorInsightsAction="ENABLE")
    db.delete_table(TableName="tbl")
    make_table(db)
    assert db.describe_contributor_insights(TableName="tbl")["ContributorInsightsStatus"] == "DISABLED"
    assert db.list_contributor_insights()["ContributorInsightsSummaries"] == []
