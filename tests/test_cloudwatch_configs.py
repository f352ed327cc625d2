"""CloudWatch's configuration resources, black-box with boto3: metric streams, anomaly
detectors, Contributor Insights rules, metric data query definitions, alarm mute rules,
OTel enrichment and resource metrics configurations stored and returned as put, with
AWS's errors; and the features Roto does not model answered as for an account without
them (managed rules, datasets, alarm contributors, widget images)."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

import pytest
from botocore.exceptions import ClientError

from cloudwatch_helpers import error

FIREHOSE = "arn:aws:firehose:us-east-1:000000000000:deliverystream/metrics"
ROLE = "arn:aws:iam::000000000000:role/streams"


@pytest.fixture
def cw(client):
    return client("cloudwatch")


def test_metric_streams_are_stored_listed_started_and_stopped(cw):
    arn = cw.put_metric_stream(Name="all", FirehoseArn=FIREHOSE, RoleArn=ROLE, OutputFormat="json",
                               IncludeFilters=[{"Namespace": "AWS/SQS"}])["Arn"]
    assert arn == "arn:aws:cloudwatch:us-east-1:000000000000:metric-stream/all"
    s = cw.get_metric_stream(Name="all")
    assert (s["Name"], s["State"], s["OutputFormat"], s["FirehoseArn"]) == ("all", "running", "json", FIREHOSE)
    assert s["IncludeFilters"] == [{"Namespace": "AWS/SQS"}] and s["IncludeLinkedAccountsMetrics"] is False
    cw.stop_metric_streams(Names=["all", "missing"])
    assert cw.get_metric_stream(Name="all")["State"] == "stopped"
    cw.start_metric_streams(Names=["all"])
    [entry] = cw.list_metric_streams()["Entries"]
    assert (entry["Name"], entry["State"], entry["Arn"]) == ("all", "running", arn)
    cw.delete_metric_stream(Name="all")
    cw.delete_metric_stream(Name="all")
    with pytest.raises(ClientError) as e:
        cw.get_metric_stream(Name="all")
    assert error(e)[0] == "ResourceNotFoundException" and error(e)[2] == 404


@pytest.mark.parametrize("kw, code", [
    ({"OutputFormat": "csv"}, "InvalidParameterValue"),
    ({"IncludeFilters": [{"Namespace": "A"}], "ExcludeFilters": [{"Namespace": "B"}]},
     "InvalidParameterCombination"),
])
def test_put_metric_stream_refuses_bad_settings(cw, kw, code):
    params = {"Name": "s", "FirehoseArn": FIREHOSE, "RoleArn": ROLE, "OutputFormat": "json", **kw}
    with pytest.raises(ClientError) as e:
        cw.put_metric_stream(**params)
    assert error(e)[0] == code


def test_anomaly_detectors_are_kept_by_their_metric(cw):
    single = {"Namespace": "App", "MetricName": "Latency",
              "Dimensions": [{"Name": "Route", "Value": "/a"}], "Stat": "Average"}
    first = cw.put_anomaly_detector(SingleMetricAnomalyDetector=single)["AnomalyDetectorId"]
    again = cw.put_anomaly_detector(SingleMetricAnomalyDetector=single,
                                    Configuration={"ExcludedTimeRanges": [], "MetricTimezone": "UTC"})
    assert again["AnomalyDetectorId"] == first
    cw.put_anomaly_detector(Namespace="App", MetricName="Errors", Stat="Sum")
    found = cw.describe_anomaly_detectors(MetricName="Latency")["AnomalyDetectors"]
    assert len(found) == 1
    d = found[0]
    assert d["SingleMetricAnomalyDetector"] == single and d["StateValue"] == "PENDING_TRAINING"
    assert d["Configuration"]["MetricTimezone"] == "UTC" and d["AnomalyDetectorId"] == first
    assert len(cw.describe_anomaly_detectors()["AnomalyDetectors"]) == 2
    assert cw.describe_anomaly_detectors(AnomalyDetectorTypes=["METRIC_MATH"])["AnomalyDetectors"] == []
    cw.delete_anomaly_detector(SingleMetricAnomalyDetector=single)
    with pytest.raises(ClientError) as e:
        cw.delete_anomaly_detector(SingleMetricAnomalyDetector=single)
    assert error(e)[0] == "ResourceNotFoundException"
    with pytest.raises(ClientError) as e:
        cw.put_anomaly_detector(SingleMetricAnomalyDetector={"Namespace": "App", "MetricName": "X"})
    assert error(e)[0] == "MissingParameter"


RULE = json.dumps({"Schema": {"Name": "CloudWatchLogRule", "Version": 1},
                   "LogGroupNames": ["app"], "LogFormat": "JSON",
                   "Contribution": {"Keys": ["$.ip"], "Filters": []}, "AggregateOn": "Count"})


def test_insight_rules_are_stored_switched_and_report_nothing(cw):
    cw.put_insight_rule(RuleName="top-ips", RuleDefinition=RULE)
    [rule] = cw.describe_insight_rules()["InsightRules"]
    assert (rule["Name"], rule["State"], rule["Schema"], rule["Definition"]) == (
        "top-ips", "ENABLED", "CloudWatchLogRule/1", RULE)
    assert cw.disable_insight_rules(RuleNames=["top-ips", "nope"])["Failures"] == [
        {"FailureResource": "nope", "ExceptionType": "ResourceNotFound", "FailureCode": "404",
         "FailureDescription": "Rule nope does not exist."}]
    assert cw.describe_insight_rules()["InsightRules"][0]["State"] == "DISABLED"
    cw.enable_insight_rules(RuleNames=["top-ips"])
    now = datetime.now(timezone.utc)
    report = cw.get_insight_rule_report(RuleName="top-ips", StartTime=now - timedelta(hours=1),
                                        EndTime=now, Period=60)
    assert report["KeyLabels"] == ["$.ip"] and report["Contributors"] == []
    assert report["AggregationStatistic"] == "Count" and report["AggregateValue"] == 0
    assert cw.delete_insight_rules(RuleNames=["top-ips"])["Failures"] == []
    with pytest.raises(ClientError) as e:
        cw.get_insight_rule_report(RuleName="top-ips", StartTime=now, EndTime=now, Period=60)
    assert error(e)[0] == "ResourceNotFoundException"
    with pytest.raises(ClientError) as e:
        cw.put_insight_rule(RuleName="bad", RuleDefinition="{not json")
    assert error(e)[0] == "InvalidParameterValue"


def test_managed_insight_rules_are_none(cw):
    arn = "arn:aws:ec2:us-east-1:000000000000:vpc-endpoint-service/vpce-svc-1"
    assert cw.list_managed_insight_rules(ResourceARN=arn)["ManagedRules"] == []
    failed = cw.put_managed_insight_rules(
        ManagedRules=[{"TemplateName": "VpcEndpointService-Rule", "ResourceARN": arn}])["Failures"]
    assert failed[0]["FailureResource"] == arn and failed[0]["ExceptionType"] == "InvalidParameterValue"


def test_metric_data_query_definitions(cw):
    made = cw.put_metric_data_query_definition(Path="team/latency", Expression="SELECT AVG(x) FROM y",
                                               Type="METRICS_INSIGHTS")
    got = cw.get_metric_data_query_definition(Id=made["Id"])
    assert (got["Path"], got["Expression"], got["Arn"]) == ("team/latency", "SELECT AVG(x) FROM y", made["Arn"])
    updated = cw.put_metric_data_query_definition(Id=made["Id"], Path="team/p99",
                                                  Expression="SELECT MAX(x) FROM y", Type="METRICS_INSIGHTS")
    assert updated["CreatedAt"] == made["CreatedAt"] and updated["Path"] == "team/p99"
    [item] = cw.list_metric_data_query_definitions()["Items"]
    assert item["Id"] == made["Id"]
    cw.delete_metric_data_query_definition(Id=made["Id"])
    with pytest.raises(ClientError) as e:
        cw.get_metric_data_query_definition(Id=made["Id"])
    assert error(e)[0] == "ResourceNotFoundException"
    with pytest.raises(ClientError) as e:
        cw.put_metric_data_query_definition(Id="nope", Path="p", Expression="e", Type="METRICS_INSIGHTS")
    assert error(e)[0] == "ResourceNotFoundException"


def test_alarm_mute_rules(cw):
    later = datetime.now(timezone.utc) + timedelta(days=1)
    cw.put_alarm_mute_rule(Name="deploy", Description="quiet", Rule={"Schedule": {
        "Expression": "cron(0 2 * * ? *)", "Duration": "PT1H"}},
        MuteTargets={"AlarmNames": ["high"]}, StartDate=later)
    rule = cw.get_alarm_mute_rule(AlarmMuteRuleName="deploy")
    assert rule["Name"] == "deploy" and rule["Status"] == "SCHEDULED" and rule["MuteType"] == "RECURRING"
    assert rule["AlarmMuteRuleArn"].endswith(":alarm-mute-rule:deploy")
    assert len(cw.list_alarm_mute_rules(AlarmName="high")["AlarmMuteRuleSummaries"]) == 1
    assert cw.list_alarm_mute_rules(AlarmName="other")["AlarmMuteRuleSummaries"] == []
    assert cw.list_alarm_mute_rules(Statuses=["ACTIVE"])["AlarmMuteRuleSummaries"] == []
    cw.delete_alarm_mute_rule(AlarmMuteRuleName="deploy")
    with pytest.raises(ClientError) as e:
        cw.get_alarm_mute_rule(AlarmMuteRuleName="deploy")
    assert error(e)[0] == "ResourceNotFoundException"


def test_otel_enrichment_starts_updates_and_stops(cw):
    assert cw.get_otel_enrichment()["Status"] == "STOPPED"
    with pytest.raises(ClientError) as e:
        cw.update_otel_enrichment(IncludeFilters=[])
    assert error(e)[0] == "ResourceNotFoundException"
    cw.start_otel_enrichment()
    assert cw.get_otel_enrichment()["Status"] == "RUNNING"
    cw.stop_otel_enrichment()
    assert cw.get_otel_enrichment()["Status"] == "STOPPED"


def test_resource_metrics_configurations(cw):
    arn = "arn:aws:sqs:us-east-1:000000000000:work"
    made = cw.create_resource_metrics_configuration(ResourceArn=arn)["ResourceMetricsConfiguration"]
    assert made["ResourceArn"] == arn
    with pytest.raises(ClientError) as e:
        cw.create_resource_metrics_configuration(ResourceArn=arn)
    assert error(e)[0] == "ConflictException"
    got = cw.update_resource_metrics_configuration(ResourceArn=arn)["ResourceMetricsConfiguration"]
    assert got["CreatedAt"] == made["CreatedAt"]
    assert cw.get_resource_metrics_configuration(ResourceArn=arn)["ResourceMetricsConfiguration"]["ResourceArn"] == arn
    cw.delete_resource_metrics_configuration(ResourceArn=arn)
    for call in (cw.get_resource_metrics_configuration, cw.delete_resource_metrics_configuration,
                 cw.update_resource_metrics_configuration):
        with pytest.raises(ClientError) as e:
            call(ResourceArn=arn)
        assert error(e)[0] == "ResourceNotFoundException"


def test_datasets_contributors_and_widget_images(cw):
    with pytest.raises(ClientError) as e:
        cw.get_dataset(DatasetIdentifier="ds")
    assert error(e)[0] == "ResourceNotFoundException"
    with pytest.raises(ClientError) as e:
        cw.associate_dataset_kms_key(DatasetIdentifier="ds", KmsKeyArn="arn:aws:kms:us-east-1:000000000000:key/k")
    assert error(e)[0] == "ResourceNotFoundException"
    with pytest.raises(ClientError) as e:
        cw.describe_alarm_contributors(AlarmName="none")
    assert error(e)[0] == "ResourceNotFound"
    cw.put_metric_alarm(AlarmName="high", Namespace="App", MetricName="Errors", Statistic="Sum",
                        Period=60, EvaluationPeriods=1, Threshold=1, ComparisonOperator="GreaterThanThreshold")
    assert cw.describe_alarm_contributors(AlarmName="high")["AlarmContributors"] == []
    image = cw.get_metric_widget_image(MetricWidget=json.dumps({"metrics": [["App", "Errors"]]}))
    assert image["MetricWidgetImage"].startswith(b"\x89PNG")
    with pytest.raises(ClientError) as e:
        cw.get_metric_widget_image(MetricWidget="nope")
    assert error(e)[0] == "InvalidParameterValue"
