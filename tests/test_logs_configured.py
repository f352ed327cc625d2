"""CloudWatch Logs resources kept whole, through boto3: vended-log delivery sources,
destinations, their policies and deliveries; anomaly detectors; lookup tables; scheduled
queries; OpenSearch integrations; bearer token authentication and syslog configurations;
and what an account without CloudTrail Lake or S3 Tables answers."""

from __future__ import annotations

import json
import time

import pytest
from botocore.config import Config
from botocore.exceptions import ClientError


def code(excinfo):
    return excinfo.value.response["Error"]["Code"]


@pytest.fixture
def logs(client):
    return client("logs")


BUCKET = "arn:aws:s3:::vended-logs"
SOURCE_RESOURCE = "arn:aws:bedrock:us-east-1:000000000000:knowledge-base/KB12345678"


def test_delivery_sources_destinations_and_deliveries(logs):
    source = logs.put_delivery_source(name="kb", resourceArn=SOURCE_RESOURCE, logType="APPLICATION_LOGS")["deliverySource"]
    assert source["arn"] == "arn:aws:logs:us-east-1:000000000000:delivery-source:kb"
    assert (source["service"], source["resourceArns"]) == ("bedrock", [SOURCE_RESOURCE])
    with pytest.raises(ClientError) as e:
        logs.put_delivery_source(name="kb", resourceArn=SOURCE_RESOURCE, logType="OTHER_LOGS")
    assert code(e) == "ConflictException"
    dest = logs.put_delivery_destination(name="s3", outputFormat="json",
                                         deliveryDestinationConfiguration={"destinationResourceArn": BUCKET})["deliveryDestination"]
    assert (dest["deliveryDestinationType"], dest["outputFormat"]) == ("S3", "json")
    assert logs.get_delivery_destination(name="s3")["deliveryDestination"]["arn"] == dest["arn"]
    policy = json.dumps({"Version": "2012-10-17", "Statement": []})
    assert logs.put_delivery_destination_policy(deliveryDestinationName="s3", deliveryDestinationPolicy=policy)["policy"] == {
        "deliveryDestinationPolicy": policy}
    assert logs.get_delivery_destination_policy(deliveryDestinationName="s3")["policy"]["deliveryDestinationPolicy"] == policy
    delivery = logs.create_delivery(deliverySourceName="kb", deliveryDestinationArn=dest["arn"], fieldDelimiter=",")["delivery"]
    assert (delivery["deliverySourceName"], delivery["deliveryDestinationType"]) == ("kb", "S3")
    with pytest.raises(ClientError) as e:
        logs.create_delivery(deliverySourceName="kb", deliveryDestinationArn=dest["arn"])
    assert code(e) == "ConflictException"
    logs.update_delivery_configuration(id=delivery["id"], fieldDelimiter="|")
    assert logs.get_delivery(id=delivery["id"])["delivery"]["fieldDelimiter"] == "|"
    assert [d["id"] for d in logs.describe_deliveries(deliverySourceNames=["kb"])["deliveries"]] == [delivery["id"]]
    assert [s["name"] for s in logs.describe_delivery_sources()["deliverySources"]] == ["kb"]
    assert [d["name"] for d in logs.describe_delivery_destinations()["deliveryDestinations"]] == ["s3"]
    for call in (lambda: logs.delete_delivery_source(name="kb"), lambda: logs.delete_delivery_destination(name="s3")):
        with pytest.raises(ClientError) as e:
            call()
        assert code(e) == "ConflictException"
    logs.delete_delivery(id=delivery["id"])
    logs.delete_delivery_source(name="kb")
    logs.delete_delivery_destination_policy(deliveryDestinationName="s3")
    logs.delete_delivery_destination(name="s3")
    for call in (lambda: logs.get_delivery(id=delivery["id"]), lambda: logs.get_delivery_source(name="kb"),
                 lambda: logs.get_delivery_destination(name="s3"),
                 lambda: logs.create_delivery(deliverySourceName="kb", deliveryDestinationArn=dest["arn"])):
        with pytest.raises(ClientError) as e:
            call()
        assert code(e) == "ResourceNotFoundException"


def test_anomaly_detectors(logs):
    logs.create_log_group(logGroupName="app")
    group = "arn:aws:logs:us-east-1:000000000000:log-group:app"
    arn = logs.create_log_anomaly_detector(logGroupArnList=[group], detectorName="d", evaluationFrequency="FIVE_MIN")["anomalyDetectorArn"]
    got = logs.get_log_anomaly_detector(anomalyDetectorArn=arn)
    assert (got["detectorName"], got["logGroupArnList"], got["anomalyDetectorStatus"]) == ("d", [group], "INITIALIZING")
    logs.update_log_anomaly_detector(anomalyDetectorArn=arn, enabled=False, evaluationFrequency="ONE_HOUR")
    got = logs.get_log_anomaly_detector(anomalyDetectorArn=arn)
    assert (got["anomalyDetectorStatus"], got["evaluationFrequency"]) == ("PAUSED", "ONE_HOUR")
    assert [d["anomalyDetectorArn"] for d in logs.list_log_anomaly_detectors(filterLogGroupArn=group)["anomalyDetectors"]] == [arn]
    logs.delete_log_anomaly_detector(anomalyDetectorArn=arn)
    with pytest.raises(ClientError) as e:
        logs.get_log_anomaly_detector(anomalyDetectorArn=arn)
    assert code(e) == "ResourceNotFoundException"
    with pytest.raises(ClientError) as e:
        logs.create_log_anomaly_detector(logGroupArnList=["arn:aws:logs:us-east-1:000000000000:log-group:missing"])
    assert code(e) == "ResourceNotFoundException"


def test_lookup_tables(logs):
    created = logs.create_lookup_table(lookupTableName="hosts", tableBody="host,team\na,x\nb,y\n", description="owners")
    arn = created["lookupTableArn"]
    with pytest.raises(ClientError) as e:
        logs.create_lookup_table(lookupTableName="hosts", tableBody="h\n")
    assert code(e) == "ResourceAlreadyExistsException"
    got = logs.get_lookup_table(lookupTableArn=arn)
    assert (got["tableBody"], got["description"], got["sizeBytes"]) == ("host,team\na,x\nb,y\n", "owners", 18)
    logs.update_lookup_table(lookupTableArn=arn, tableBody="host,team\nc,z\n")
    tables = logs.describe_lookup_tables(lookupTableNamePrefix="ho")["lookupTables"]
    assert [(t["lookupTableName"], t["tableFields"], t["recordsCount"]) for t in tables] == [("hosts", ["host", "team"], 1)]
    logs.delete_lookup_table(lookupTableArn=arn)
    with pytest.raises(ClientError) as e:
        logs.get_lookup_table(lookupTableArn=arn)
    assert code(e) == "ResourceNotFoundException"


def test_scheduled_queries(logs):
    created = logs.create_scheduled_query(name="errors", queryLanguage="CWLI", queryString="fields @message | limit 5",
                                          scheduleExpression="rate(1 hour)", logGroupIdentifiers=["app"],
                                          executionRoleArn="arn:aws:iam::000000000000:role/q")
    arn = created["scheduledQueryArn"]
    assert created["state"] == "ENABLED"
    with pytest.raises(ClientError) as e:
        logs.create_scheduled_query(name="errors", queryLanguage="CWLI", queryString="x", scheduleExpression="rate(1 hour)",
                                    executionRoleArn="arn:aws:iam::000000000000:role/q")
    assert code(e) == "ConflictException"
    got = logs.get_scheduled_query(identifier="errors")
    assert (got["scheduledQueryArn"], got["queryString"], got["scheduleExpression"]) == (arn, "fields @message | limit 5", "rate(1 hour)")
    up = logs.update_scheduled_query(identifier=arn, queryLanguage="CWLI", queryString="fields @timestamp",
                                     scheduleExpression="rate(2 hours)", executionRoleArn="arn:aws:iam::000000000000:role/q", state="DISABLED")
    assert (up["queryString"], up["state"]) == ("fields @timestamp", "DISABLED")
    assert [q["name"] for q in logs.list_scheduled_queries(state="DISABLED")["scheduledQueries"]] == ["errors"]
    history = logs.get_scheduled_query_history(identifier=arn, startTime=0, endTime=2_000_000_000)
    assert history["triggerHistory"] == []
    logs.delete_scheduled_query(identifier=arn)
    with pytest.raises(ClientError) as e:
        logs.get_scheduled_query(identifier=arn)
    assert code(e) == "ResourceNotFoundException"


def test_integrations(logs):
    config = {"openSearchResourceConfig": {"dataSourceRoleArn": "arn:aws:iam::000000000000:role/os",
                                           "dashboardViewerPrincipals": ["arn:aws:iam::000000000000:role/v"], "retentionDays": 30}}
    out = logs.put_integration(integrationName="os", resourceConfig=config, integrationType="OPENSEARCH")
    assert out["integrationStatus"] == "ACTIVE"
    got = logs.get_integration(integrationName="os")
    assert (got["integrationType"], got["integrationStatus"]) == ("OPENSEARCH", "ACTIVE")
    assert [i["integrationName"] for i in logs.list_integrations(integrationNamePrefix="o")["integrationSummaries"]] == ["os"]
    logs.delete_integration(integrationName="os")
    with pytest.raises(ClientError) as e:
        logs.get_integration(integrationName="os")
    assert code(e) == "ResourceNotFoundException"


def test_bearer_tokens_syslog_and_what_an_account_without_the_features_answers(logs):
    logs.create_log_group(logGroupName="ingest")
    assert logs.describe_log_groups(logGroupNamePrefix="ingest")["logGroups"][0]["bearerTokenAuthenticationEnabled"] is False
    logs.put_bearer_token_authentication(logGroupIdentifier="ingest", bearerTokenAuthenticationEnabled=True)
    assert logs.describe_log_groups(logGroupNamePrefix="ingest")["logGroups"][0]["bearerTokenAuthenticationEnabled"] is True
    with pytest.raises(ClientError) as e:
        logs.put_bearer_token_authentication(logGroupIdentifier="missing", bearerTokenAuthenticationEnabled=True)
    assert code(e) == "ResourceNotFoundException"
    logs.put_syslog_configuration(logGroupIdentifier="ingest", vpcEndpointId="vpce-0123456789abcdef0")
    configs = logs.list_syslog_configurations(logGroupIdentifier="ingest")["syslogConfigurations"]
    assert [(c["logGroupArn"], c["sourceType"], c["vpcEndpointId"]) for c in configs] == [
        ("arn:aws:logs:us-east-1:000000000000:log-group:ingest", "VPCE", "vpce-0123456789abcdef0")]
    logs.delete_syslog_configuration(logGroupIdentifier="ingest", vpcEndpointId="vpce-0123456789abcdef0")
    with pytest.raises(ClientError) as e:
        logs.delete_syslog_configuration(logGroupIdentifier="ingest", vpcEndpointId="vpce-0123456789abcdef0")
    assert code(e) == "ResourceNotFoundException"
    with pytest.raises(ClientError) as e:
        logs.create_import_task(importSourceArn="arn:aws:cloudtrail:us-east-1:000000000000:eventdatastore/abc",
                                importRoleArn="arn:aws:iam::000000000000:role/i")
    assert code(e) == "ResourceNotFoundException"
    with pytest.raises(ClientError) as e:
        logs.associate_source_to_s3_table_integration(integrationArn="arn:aws:logs:us-east-1:000000000000:integration:x",
                                                      dataSource={"name": "amazon_vpc", "type": "flow"})
    assert code(e) == "ResourceNotFoundException"
    with pytest.raises(ClientError) as e:
        logs.get_log_fields(dataSourceName="amazon_vpc", dataSourceType="flow")
    assert code(e) == "ResourceNotFoundException"


def test_live_tail_streams_new_events_that_match(logs, client):
    tail = client("logs", config=Config(inject_host_prefix=False, retries={"max_attempts": 1}))
    logs.create_log_group(logGroupName="tail")
    logs.create_log_stream(logGroupName="tail", logStreamName="web-1")
    logs.create_log_stream(logGroupName="tail", logStreamName="db-1")
    group = "arn:aws:logs:us-east-1:000000000000:log-group:tail"
    out = tail.start_live_tail(logGroupIdentifiers=[group], logStreamNamePrefixes=["web"], logEventFilterPattern="ERROR")
    stream = iter(out["responseStream"])
    start = next(stream)["sessionStart"]
    assert start["logGroupIdentifiers"] == [group] and start["sessionId"]
    now = int(time.time() * 1000)
    events = [{"timestamp": now, "message": "ERROR one"}, {"timestamp": now + 1, "message": "INFO two"}]
    logs.put_log_events(logGroupName="tail", logStreamName="web-1", logEvents=events)
    logs.put_log_events(logGroupName="tail", logStreamName="db-1", logEvents=[{"timestamp": now, "message": "ERROR db"}])
    seen = []
    for _ in range(5):
        update = next(stream)["sessionUpdate"]
        seen += [(r["logStreamName"], r["message"]) for r in update["sessionResults"]]
        if seen:
            break
    assert seen == [("web-1", "ERROR one")]
    out["responseStream"].close()
    with pytest.raises(ClientError) as e:
        tail.start_live_tail(logGroupIdentifiers=["arn:aws:logs:us-east-1:000000000000:log-group:missing"])
    assert code(e) == "ResourceNotFoundException"
