"""Amazon ECR's registry settings, black-box with boto3: account settings, the registry's
scanning, replication and signing configurations, pull through cache rules, repository
creation templates and pull-time exclusions, stored and returned exactly; and the image
operations that name one image or layer, answered for repositories that hold none."""

from __future__ import annotations

import pytest
from botocore.exceptions import ClientError

ACCOUNT = "000000000000"
DIGEST = "sha256:" + "ab" * 32


@pytest.fixture
def ecr(client):
    return client("ecr")


def error(excinfo):
    e = excinfo.value.response
    return e["Error"]["Code"], e["Error"]["Message"], e["ResponseMetadata"]["HTTPStatusCode"]


def test_account_settings_have_defaults_and_keep_what_is_put(ecr):
    default = ecr.get_account_setting(name="BASIC_SCAN_TYPE_VERSION")
    assert (default["name"], default["value"]) == ("BASIC_SCAN_TYPE_VERSION", "AWS_NATIVE")
    out = ecr.put_account_setting(name="REGISTRY_POLICY_SCOPE", value="V1")
    assert (out["name"], out["value"]) == ("REGISTRY_POLICY_SCOPE", "V1")
    assert ecr.get_account_setting(name="REGISTRY_POLICY_SCOPE")["value"] == "V1"
    with pytest.raises(ClientError) as e:
        ecr.put_account_setting(name="REGISTRY_POLICY_SCOPE", value="V9")
    assert error(e)[0] == "InvalidParameterException" and error(e)[2] == 400
    with pytest.raises(ClientError) as e:
        ecr.get_account_setting(name="NO_SUCH_SETTING")
    assert error(e)[0] == "InvalidParameterException"


def test_registry_scanning_configuration_round_trips_and_repositories_report_theirs(ecr):
    default = ecr.get_registry_scanning_configuration()
    assert default["registryId"] == ACCOUNT
    assert default["scanningConfiguration"] == {"scanType": "BASIC", "rules": []}
    rules = [{"scanFrequency": "CONTINUOUS_SCAN",
              "repositoryFilters": [{"filter": "prod-*", "filterType": "WILDCARD"}]}]
    put = ecr.put_registry_scanning_configuration(scanType="ENHANCED", rules=rules)
    assert put["registryScanningConfiguration"] == {"scanType": "ENHANCED", "rules": rules}
    assert ecr.get_registry_scanning_configuration()["scanningConfiguration"] == {"scanType": "ENHANCED", "rules": rules}
    with pytest.raises(ClientError) as e:
        ecr.put_registry_scanning_configuration(scanType="BASIC", rules=rules)
    assert error(e)[0] == "ValidationException"

    ecr.create_repository(repositoryName="scanned", imageScanningConfiguration={"scanOnPush": True})
    out = ecr.batch_get_repository_scanning_configuration(repositoryNames=["scanned", "missing"])
    [config] = out["scanningConfigurations"]
    assert config["repositoryName"] == "scanned" and config["scanOnPush"] is True
    assert config["scanFrequency"] == "SCAN_ON_PUSH"
    assert config["repositoryArn"].endswith(":repository/scanned")
    assert out["failures"] == [{"repositoryName": "missing", "failureCode": "REPOSITORY_NOT_FOUND",
                                "failureReason": "REPOSITORY_NOT_FOUND"}]


def test_replication_configuration_is_what_describe_registry_reports(ecr):
    assert ecr.describe_registry()["replicationConfiguration"] == {"rules": []}
    config = {"rules": [{"destinations": [{"region": "eu-west-1", "registryId": ACCOUNT}],
                         "repositoryFilters": [{"filter": "prod", "filterType": "PREFIX_MATCH"}]}]}
    assert ecr.put_replication_configuration(replicationConfiguration=config)["replicationConfiguration"] == config
    assert ecr.describe_registry()["replicationConfiguration"] == config
    with pytest.raises(ClientError) as e:
        ecr.put_replication_configuration(replicationConfiguration={
            "rules": [{"destinations": [{"region": "us-east-1", "registryId": ACCOUNT}]}]})
    assert error(e)[0] == "InvalidParameterException"


def test_signing_configuration_put_get_delete(ecr):
    with pytest.raises(ClientError) as e:
        ecr.get_signing_configuration()
    assert error(e)[0] == "SigningConfigurationNotFoundException"
    config = {"rules": [{"signingProfileArn": f"arn:aws:signer:us-east-1:{ACCOUNT}:/signing-profiles/images"}]}
    assert ecr.put_signing_configuration(signingConfiguration=config)["signingConfiguration"] == config
    got = ecr.get_signing_configuration()
    assert got["registryId"] == ACCOUNT and got["signingConfiguration"] == config
    assert ecr.delete_signing_configuration()["signingConfiguration"] == config
    with pytest.raises(ClientError) as e:
        ecr.delete_signing_configuration()
    assert error(e)[0] == "SigningConfigurationNotFoundException"


def test_pull_through_cache_rules_are_created_described_updated_validated_and_deleted(ecr):
    rule = ecr.create_pull_through_cache_rule(ecrRepositoryPrefix="ecr-public", upstreamRegistryUrl="public.ecr.aws")
    assert rule["upstreamRegistry"] == "ecr-public" and rule["registryId"] == ACCOUNT
    assert rule["createdAt"]
    with pytest.raises(ClientError) as e:
        ecr.create_pull_through_cache_rule(ecrRepositoryPrefix="ecr-public", upstreamRegistryUrl="public.ecr.aws")
    assert error(e)[0] == "PullThroughCacheRuleAlreadyExistsException"
    with pytest.raises(ClientError) as e:
        ecr.create_pull_through_cache_rule(ecrRepositoryPrefix="other", upstreamRegistryUrl="registry.example.com")
    assert error(e)[0] == "UnsupportedUpstreamRegistryException"
    with pytest.raises(ClientError) as e:
        ecr.create_pull_through_cache_rule(ecrRepositoryPrefix="hub", upstreamRegistryUrl="registry-1.docker.io")
    assert error(e)[0] == "InvalidParameterException"
    secret = f"arn:aws:secretsmanager:us-east-1:{ACCOUNT}:secret:ecr-pullthroughcache/hub-abc123"
    ecr.create_pull_through_cache_rule(ecrRepositoryPrefix="hub", upstreamRegistryUrl="registry-1.docker.io",
                                       credentialArn=secret)

    rules = ecr.describe_pull_through_cache_rules()["pullThroughCacheRules"]
    assert [r["ecrRepositoryPrefix"] for r in rules] == ["ecr-public", "hub"]
    assert rules[1]["credentialArn"] == secret and rules[1]["upstreamRegistry"] == "docker-hub"
    page = ecr.describe_pull_through_cache_rules(maxResults=1)
    assert len(page["pullThroughCacheRules"]) == 1 and page["nextToken"]
    with pytest.raises(ClientError) as e:
        ecr.describe_pull_through_cache_rules(ecrRepositoryPrefixes=["nope"])
    assert error(e)[0] == "PullThroughCacheRuleNotFoundException"

    new_secret = secret.replace("abc123", "def456")
    updated = ecr.update_pull_through_cache_rule(ecrRepositoryPrefix="hub", credentialArn=new_secret)
    assert updated["credentialArn"] == new_secret and updated["updatedAt"]
    valid = ecr.validate_pull_through_cache_rule(ecrRepositoryPrefix="hub")
    assert valid["isValid"] is True and valid["upstreamRegistryUrl"] == "registry-1.docker.io"
    deleted = ecr.delete_pull_through_cache_rule(ecrRepositoryPrefix="hub")
    assert deleted["ecrRepositoryPrefix"] == "hub" and deleted["credentialArn"] == new_secret
    for call in (ecr.delete_pull_through_cache_rule, ecr.update_pull_through_cache_rule,
                 ecr.validate_pull_through_cache_rule):
        with pytest.raises(ClientError) as e:
            call(ecrRepositoryPrefix="hub")
        assert error(e)[0] == "PullThroughCacheRuleNotFoundException"


def test_repository_creation_templates_round_trip(ecr):
    created = ecr.create_repository_creation_template(
        prefix="apps", description="application images", appliedFor=["PULL_THROUGH_CACHE", "REPLICATION"],
        imageTagMutability="IMMUTABLE", resourceTags=[{"Key": "team", "Value": "core"}])
    template = created["repositoryCreationTemplate"]
    assert created["registryId"] == ACCOUNT
    assert template["prefix"] == "apps" and template["imageTagMutability"] == "IMMUTABLE"
    assert template["encryptionConfiguration"] == {"encryptionType": "AES256"}
    assert template["resourceTags"] == [{"Key": "team", "Value": "core"}]
    assert template["createdAt"] and template["updatedAt"]
    with pytest.raises(ClientError) as e:
        ecr.create_repository_creation_template(prefix="apps", appliedFor=["REPLICATION"])
    assert error(e)[0] == "TemplateAlreadyExistsException"
    with pytest.raises(ClientError) as e:
        ecr.create_repository_creation_template(prefix="other", appliedFor=["SOMETIMES"])
    assert error(e)[0] == "ValidationException"
    ecr.create_repository_creation_template(prefix="ROOT", appliedFor=["CREATE_ON_PUSH"])

    listed = ecr.describe_repository_creation_templates()["repositoryCreationTemplates"]
    assert [t["prefix"] for t in listed] == ["ROOT", "apps"]
    only = ecr.describe_repository_creation_templates(prefixes=["apps"])["repositoryCreationTemplates"]
    assert [t["description"] for t in only] == ["application images"]

    updated = ecr.update_repository_creation_template(prefix="apps", description="changed")
    assert updated["repositoryCreationTemplate"]["description"] == "changed"
    assert updated["repositoryCreationTemplate"]["appliedFor"] == ["PULL_THROUGH_CACHE", "REPLICATION"]
    assert ecr.delete_repository_creation_template(prefix="apps")["repositoryCreationTemplate"]["prefix"] == "apps"
    for call in (lambda: ecr.delete_repository_creation_template(prefix="apps"),
                 lambda: ecr.update_repository_creation_template(prefix="apps", description="x")):
        with pytest.raises(ClientError) as e:
            call()
        assert error(e)[0] == "TemplateNotFoundException"


def test_pull_time_update_exclusions(ecr):
    principal = f"arn:aws:iam::{ACCOUNT}:role/ci"
    out = ecr.register_pull_time_update_exclusion(principalArn=principal)
    assert out["principalArn"] == principal and out["createdAt"]
    with pytest.raises(ClientError) as e:
        ecr.register_pull_time_update_exclusion(principalArn=principal)
    assert error(e)[0] == "ExclusionAlreadyExistsException"
    assert ecr.list_pull_time_update_exclusions()["pullTimeUpdateExclusions"] == [principal]
    assert ecr.deregister_pull_time_update_exclusion(principalArn=principal)["principalArn"] == principal
    with pytest.raises(ClientError) as e:
        ecr.deregister_pull_time_update_exclusion(principalArn=principal)
    assert error(e)[0] == "ExclusionNotFoundException"
    assert ecr.list_pull_time_update_exclusions()["pullTimeUpdateExclusions"] == []


def test_operations_on_one_image_or_layer_answer_as_for_an_empty_repository(ecr):
    ecr.create_repository(repositoryName="empty")
    image = {"imageTag": "latest"}
    for call in (ecr.describe_image_scan_findings, ecr.start_image_scan, ecr.describe_image_replication_status,
                 ecr.describe_image_signing_status):
        with pytest.raises(ClientError) as e:
            call(repositoryName="empty", imageId=image)
        code, message, status = error(e)
        assert (code, status) == ("ImageNotFoundException", 400)
        assert message == ("The image with imageId {imageDigest:'null', imageTag:'latest'} does not exist within "
                           f"the repository with name 'empty' in the registry with id '{ACCOUNT}'")
        with pytest.raises(ClientError) as e:
            call(repositoryName="absent", imageId=image)
        assert error(e)[0] == "RepositoryNotFoundException"
    with pytest.raises(ClientError) as e:
        ecr.update_image_storage_class(repositoryName="empty", imageId=image, targetStorageClass="ARCHIVE")
    assert error(e)[0] == "ImageNotFoundException"
    assert ecr.list_image_referrers(repositoryName="empty", subjectId={"imageDigest": DIGEST})["referrers"] == []

    layers = ecr.batch_check_layer_availability(repositoryName="empty", layerDigests=[DIGEST, "sha256:short"])
    assert layers["layers"] == [{"layerDigest": DIGEST, "layerAvailability": "UNAVAILABLE"}]
    assert [f["failureCode"] for f in layers["failures"]] == ["InvalidLayerDigest"]
    with pytest.raises(ClientError) as e:
        ecr.get_download_url_for_layer(repositoryName="empty", layerDigest=DIGEST)
    assert error(e)[0] == "LayersNotFoundException"

    assert ecr.list_replication_backfills()["backfills"] == []
    with pytest.raises(ClientError) as e:
        ecr.describe_replication_backfill_results(replicationBackfillId="12345678-1234-1234-1234-123456789012")
    assert error(e)[0] == "ReplicationBackfillNotFoundException"


def test_replication_backfills_need_a_configured_destination(ecr):
    destination = {"region": "us-west-2", "registryId": "000000000000"}
    with pytest.raises(ClientError) as e:
        ecr.start_replication_backfill(destination=destination)
    assert error(e)[0] == "ValidationException"
    ecr.put_replication_configuration(replicationConfiguration={
        "rules": [{"destinations": [destination]}]})
    started = ecr.start_replication_backfill(destination=destination)
    backfill_id = started["replicationBackfillId"]
    assert started["destination"] == destination and started["status"] == "COMPLETE"
    listed = ecr.list_replication_backfills()["backfills"]
    assert [b["replicationBackfillId"] for b in listed] == [backfill_id]
    assert listed[0]["progress"]["totalReplicationCount"] == 0
    described = ecr.describe_replication_backfill_results(replicationBackfillId=backfill_id)
    assert described["status"] == "COMPLETE" and described["results"] == []
    assert "startedAt" in described and "endedAt" in described
    with pytest.raises(ClientError) as e:
        ecr.stop_replication_backfill(replicationBackfillId=backfill_id)
    assert error(e)[0] == "ReplicationBackfillInvalidStatusException"
