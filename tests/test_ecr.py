"""Amazon ECR's control plane, black-box with boto3: repositories and their settings,
repository, lifecycle and registry policies, tags, the image operations over an empty
repository, and authorization tokens, with ECR's error codes and messages."""

from __future__ import annotations

import base64
import json

import pytest
from botocore.exceptions import ClientError

ACCOUNT = "000000000000"
REGION = "us-east-1"
POLICY = json.dumps({
    "Version": "2012-10-17",
    "Statement": [{
        "Sid": "pull",
        "Effect": "Allow",
        "Principal": {"AWS": f"arn:aws:iam::{ACCOUNT}:root"},
        "Action": ["ecr:BatchGetImage", "ecr:GetDownloadUrlForLayer"],
    }],
})
LIFECYCLE = json.dumps({"rules": [{
    "rulePriority": 1,
    "description": "expire untagged images after two weeks",
    "selection": {"tagStatus": "untagged", "countType": "sinceImagePushed",
                  "countUnit": "days", "countNumber": 14},
    "action": {"type": "expire"},
}]})


@pytest.fixture
def ecr(client):
    return client("ecr")


def error(excinfo):
    e = excinfo.value.response
    return e["Error"]["Code"], e["Error"]["Message"], e["ResponseMetadata"]["HTTPStatusCode"]


def not_found(name):
    return (
        "RepositoryNotFoundException",
        f"The repository with name '{name}' does not exist in the registry with id '{ACCOUNT}'",
        400,
    )


def test_create_repository_answers_its_description(ecr):
    repo = ecr.create_repository(repositoryName="team/app")["repository"]
    assert repo["repositoryArn"] == f"arn:aws:ecr:{REGION}:{ACCOUNT}:repository/team/app"
    assert repo["registryId"] == ACCOUNT
    assert repo["repositoryName"] == "team/app"
    assert repo["repositoryUri"] == f"{ACCOUNT}.dkr.ecr.{REGION}.amazonaws.com/team/app"
    assert repo["imageTagMutability"] == "MUTABLE"
    assert repo["imageScanningConfiguration"] == {"scanOnPush": False}
    assert repo["encryptionConfiguration"] == {"encryptionType": "AES256"}
    assert "createdAt" in repo
    [described] = ecr.describe_repositories(repositoryNames=["team/app"])["repositories"]
    assert described == repo


def test_create_repository_keeps_its_settings(ecr):
    repo = ecr.create_repository(
        repositoryName="cdk-hnb659fds-container-assets-000000000000-us-east-1",
        imageTagMutability="IMMUTABLE",
        imageScanningConfiguration={"scanOnPush": True},
        tags=[{"Key": "team", "Value": "infra"}],
    )["repository"]
    assert repo["imageTagMutability"] == "IMMUTABLE"
    assert repo["imageScanningConfiguration"] == {"scanOnPush": True}
    tags = ecr.list_tags_for_resource(resourceArn=repo["repositoryArn"])["tags"]
    assert tags == [{"Key": "team", "Value": "infra"}]


def test_tag_mutability_exclusion_filters(ecr):
    filters = [{"filterType": "WILDCARD", "filter": "latest"}]
    repo = ecr.create_repository(
        repositoryName="excluded", imageTagMutability="IMMUTABLE_WITH_EXCLUSION",
        imageTagMutabilityExclusionFilters=filters,
    )["repository"]
    assert repo["imageTagMutabilityExclusionFilters"] == filters
    with pytest.raises(ClientError) as e:
        ecr.create_repository(repositoryName="unfiltered", imageTagMutability="MUTABLE_WITH_EXCLUSION")
    assert error(e)[0] == "InvalidParameterException"


def test_kms_encryption_names_the_key(ecr, client):
    repo = ecr.create_repository(repositoryName="managed", encryptionConfiguration={"encryptionType": "KMS"})
    managed = client("kms").describe_key(KeyId="alias/aws/ecr")["KeyMetadata"]["Arn"]
    assert repo["repository"]["encryptionConfiguration"] == {"encryptionType": "KMS", "kmsKey": managed}
    key = client("kms").create_key()["KeyMetadata"]["Arn"]
    repo = ecr.create_repository(repositoryName="customer",
                                 encryptionConfiguration={"encryptionType": "KMS", "kmsKey": key})
    assert repo["repository"]["encryptionConfiguration"]["kmsKey"] == key
    with pytest.raises(ClientError) as e:
        ecr.create_repository(repositoryName="missing-key", encryptionConfiguration={
            "encryptionType": "KMS", "kmsKey": "arn:aws:kms:us-east-1:000000000000:key/nope"})
    assert error(e)[0] == "KmsException"
    assert e.value.response["kmsError"] == "NotFoundException"
    with pytest.raises(ClientError) as e:
        ecr.create_repository(repositoryName="aes", encryptionConfiguration={
            "encryptionType": "AES256", "kmsKey": key})
    assert error(e)[0] == "InvalidParameterException"


@pytest.mark.parametrize("name", ["Upper", "a..b", "-lead", "trail/", "a b"])
def test_repository_names_follow_ecrs_rules(ecr, name):
    with pytest.raises(ClientError) as e:
        ecr.create_repository(repositoryName=name)
    assert error(e) == (
        "InvalidParameterException",
        "Invalid parameter at 'repositoryName' failed to satisfy constraint: 'must satisfy regular "
        "expression '(?:[a-z0-9]+(?:[._-][a-z0-9]+)*/)*[a-z0-9]+(?:[._-][a-z0-9]+)*''",
        400,
    )


def test_create_repository_twice_is_refused(ecr):
    ecr.create_repository(repositoryName="twice")
    with pytest.raises(ClientError) as e:
        ecr.create_repository(repositoryName="twice")
    assert error(e) == (
        "RepositoryAlreadyExistsException",
        f"The repository with name 'twice' already exists in the registry with id '{ACCOUNT}'",
        400,
    )


def test_describe_repositories_pages_in_name_order(ecr):
    for i in range(5):
        ecr.create_repository(repositoryName=f"repo-{i}")
    first = ecr.describe_repositories(maxResults=2)
    assert [r["repositoryName"] for r in first["repositories"]] == ["repo-0", "repo-1"]
    names = [r["repositoryName"]
             for page in ecr.get_paginator("describe_repositories").paginate(PaginationConfig={"PageSize": 2})
             for r in page["repositories"]]
    assert names == [f"repo-{i}" for i in range(5)]
    with pytest.raises(ClientError) as e:
        ecr.describe_repositories(maxResults=1001)
    assert error(e) == (
        "InvalidParameterException",
        "Invalid parameter at 'maxResults' failed to satisfy constraint: "
        "'Member must have value less than or equal to 1000'",
        400,
    )


def test_describe_missing_repository(ecr):
    ecr.create_repository(repositoryName="present")
    with pytest.raises(ClientError) as e:
        ecr.describe_repositories(repositoryNames=["present", "absent"])
    assert error(e) == not_found("absent")


def test_repositories_are_per_region(server):
    server.client("ecr", region_name="eu-west-1").create_repository(repositoryName="regional")
    assert server.client("ecr").describe_repositories()["repositories"] == []


def test_delete_repository(ecr):
    created = ecr.create_repository(repositoryName="gone")["repository"]
    deleted = ecr.delete_repository(repositoryName="gone", force=True)["repository"]
    assert deleted["repositoryArn"] == created["repositoryArn"]
    with pytest.raises(ClientError) as e:
        ecr.delete_repository(repositoryName="gone")
    assert error(e) == not_found("gone")


def test_settings_change(ecr):
    ecr.create_repository(repositoryName="settings")
    out = ecr.put_image_scanning_configuration(repositoryName="settings",
                                               imageScanningConfiguration={"scanOnPush": True})
    assert out["imageScanningConfiguration"] == {"scanOnPush": True}
    out = ecr.put_image_tag_mutability(repositoryName="settings", imageTagMutability="IMMUTABLE")
    assert (out["registryId"], out["repositoryName"], out["imageTagMutability"]) == (ACCOUNT, "settings", "IMMUTABLE")
    [repo] = ecr.describe_repositories()["repositories"]
    assert repo["imageScanningConfiguration"] == {"scanOnPush": True}
    assert repo["imageTagMutability"] == "IMMUTABLE"
    with pytest.raises(ClientError) as e:
        ecr.put_image_tag_mutability(repositoryName="nope", imageTagMutability="MUTABLE")
    assert error(e) == not_found("nope")


def test_repository_policy_lifecycle(ecr):
    ecr.create_repository(repositoryName="policed")
    with pytest.raises(ClientError) as e:
        ecr.get_repository_policy(repositoryName="policed")
    assert error(e) == (
        "RepositoryPolicyNotFoundException",
        f"Repository policy does not exist for the repository with name 'policed' in the registry with id '{ACCOUNT}'",
        400,
    )
    out = ecr.set_repository_policy(repositoryName="policed", policyText=POLICY)
    assert out == {"registryId": ACCOUNT, "repositoryName": "policed", "policyText": POLICY,
                   "ResponseMetadata": out["ResponseMetadata"]}
    assert ecr.get_repository_policy(repositoryName="policed")["policyText"] == POLICY
    assert ecr.delete_repository_policy(repositoryName="policed")["policyText"] == POLICY
    with pytest.raises(ClientError) as e:
        ecr.delete_repository_policy(repositoryName="policed")
    assert error(e)[0] == "RepositoryPolicyNotFoundException"


def test_bad_repository_policy_is_refused(ecr):
    ecr.create_repository(repositoryName="policed")
    with pytest.raises(ClientError) as e:
        ecr.set_repository_policy(repositoryName="policed", policyText='{"Version": "2012-10-17"}')
    assert error(e) == (
        "InvalidParameterException",
        "Invalid parameter at 'PolicyText' failed to satisfy constraint: 'Invalid repository policy provided'",
        400,
    )
    with pytest.raises(ClientError) as e:
        ecr.set_repository_policy(repositoryName="unknown", policyText=POLICY)
    assert error(e) == not_found("unknown")


def test_lifecycle_policy_and_preview(ecr):
    ecr.create_repository(repositoryName="aging")
    with pytest.raises(ClientError) as e:
        ecr.get_lifecycle_policy(repositoryName="aging")
    assert error(e) == (
        "LifecyclePolicyNotFoundException",
        f"Lifecycle policy does not exist for the repository with name 'aging' in the registry with id '{ACCOUNT}'",
        400,
    )
    with pytest.raises(ClientError) as e:
        ecr.get_lifecycle_policy_preview(repositoryName="aging")
    assert error(e)[0] == "LifecyclePolicyPreviewNotFoundException"
    put = ecr.put_lifecycle_policy(repositoryName="aging", lifecyclePolicyText=LIFECYCLE)
    assert put["lifecyclePolicyText"] == LIFECYCLE
    assert ecr.get_lifecycle_policy(repositoryName="aging")["lifecyclePolicyText"] == LIFECYCLE
    started = ecr.start_lifecycle_policy_preview(repositoryName="aging")
    assert started["status"] == "IN_PROGRESS"
    preview = ecr.get_lifecycle_policy_preview(repositoryName="aging")
    assert preview["status"] == "COMPLETE"
    assert preview["previewResults"] == []
    assert preview["summary"] == {"expiringImageTotalCount": 0}
    assert ecr.delete_lifecycle_policy(repositoryName="aging")["lifecyclePolicyText"] == LIFECYCLE
    with pytest.raises(ClientError) as e:
        ecr.delete_lifecycle_policy(repositoryName="aging")
    assert error(e)[0] == "LifecyclePolicyNotFoundException"


def test_bad_lifecycle_policy_is_refused(ecr):
    ecr.create_repository(repositoryName="aging")
    bad = json.dumps({"rules": [{"rulePriority": 1, "description": "x" * 80,
                                 "selection": {"tagStatus": "untagged", "countType": "sinceImagePushed"},
                                 "action": {"type": "expire"}}]})
    with pytest.raises(ClientError) as e:
        ecr.put_lifecycle_policy(repositoryName="aging", lifecyclePolicyText=bad)
    assert error(e) == (
        "InvalidParameterException",
        "Invalid parameter at 'LifecyclePolicyText' failed to satisfy constraint: 'Lifecycle policy "
        "validation failure: object has missing required properties ([\"countNumber\"])'",
        400,
    )
    with pytest.raises(ClientError) as e:
        ecr.put_lifecycle_policy(repositoryName="aging", lifecyclePolicyText="not json " * 12)
    assert error(e)[1].endswith("Could not map policyString into LifecyclePolicy.'")


def test_tags(ecr):
    arn = ecr.create_repository(repositoryName="tagged", tags=[{"Key": "a", "Value": "1"}])["repository"]["repositoryArn"]
    ecr.tag_resource(resourceArn=arn, tags=[{"Key": "b", "Value": "2"}, {"Key": "a", "Value": "3"}])
    assert ecr.list_tags_for_resource(resourceArn=arn)["tags"] == [
        {"Key": "a", "Value": "3"}, {"Key": "b", "Value": "2"}]
    ecr.untag_resource(resourceArn=arn, tagKeys=["a"])
    assert ecr.list_tags_for_resource(resourceArn=arn)["tags"] == [{"Key": "b", "Value": "2"}]
    with pytest.raises(ClientError) as e:
        ecr.tag_resource(resourceArn=arn, tags=[{"Key": f"k{i}", "Value": "v"} for i in range(50)])
    assert error(e)[0] == "TooManyTagsException"
    with pytest.raises(ClientError) as e:
        ecr.tag_resource(resourceArn=arn, tags=[{"Key": "aws:reserved", "Value": "v"}])
    assert error(e)[0] == "InvalidTagParameterException"
    with pytest.raises(ClientError) as e:
        ecr.list_tags_for_resource(resourceArn=arn.replace("tagged", "untagged"))
    assert error(e) == not_found("untagged")
    with pytest.raises(ClientError) as e:
        ecr.list_tags_for_resource(resourceArn="arn:aws:s3:::bucket")
    assert error(e) == (
        "InvalidParameterException",
        "Invalid parameter at 'resourceArn' failed to satisfy constraint: 'Invalid ARN'",
        400,
    )


def test_image_operations_answer_for_an_empty_repository(ecr):
    ecr.create_repository(repositoryName="empty")
    assert ecr.list_images(repositoryName="empty")["imageIds"] == []
    assert ecr.describe_images(repositoryName="empty")["imageDetails"] == []
    with pytest.raises(ClientError) as e:
        ecr.describe_images(repositoryName="empty", imageIds=[{"imageTag": "latest"}])
    assert error(e) == (
        "ImageNotFoundException",
        "The image with imageId {imageDigest:'null', imageTag:'latest'} does not exist within the "
        f"repository with name 'empty' in the registry with id '{ACCOUNT}'",
        400,
    )
    got = ecr.batch_get_image(repositoryName="empty", imageIds=[{"imageTag": "latest"}])
    assert got["images"] == []
    assert got["failures"] == [{"imageId": {"imageTag": "latest"}, "failureCode": "ImageNotFound",
                                "failureReason": "Requested image not found"}]
    deleted = ecr.batch_delete_image(repositoryName="empty", imageIds=[{"imageTag": "v1"}])
    assert deleted["imageIds"] == [] and deleted["failures"][0]["failureCode"] == "ImageNotFound"
    with pytest.raises(ClientError) as e:
        ecr.list_images(repositoryName="nothing")
    assert error(e) == not_found("nothing")


def test_authorization_token_points_at_roto(ecr, server):
    [data] = ecr.get_authorization_token()["authorizationData"]
    user, password = base64.b64decode(data["authorizationToken"]).decode().split(":", 1)
    assert user == "AWS" and len(password) > 0
    assert data["proxyEndpoint"] == server.endpoint
    assert data["expiresAt"].timestamp() > 0


def test_registry_policy_and_description(ecr):
    with pytest.raises(ClientError) as e:
        ecr.get_registry_policy()
    assert error(e) == (
        "RegistryPolicyNotFoundException",
        f"Registry policy does not exist in the registry with id '{ACCOUNT}'",
        400,
    )
    ecr.put_registry_policy(policyText=POLICY)
    assert ecr.get_registry_policy()["policyText"] == POLICY
    assert ecr.delete_registry_policy()["policyText"] == POLICY
    with pytest.raises(ClientError) as e:
        ecr.put_registry_policy(policyText="{}")
    assert error(e)[1] == (
        "Invalid parameter at 'PolicyText' failed to satisfy constraint: 'Invalid registry policy provided'")
    registry = ecr.describe_registry()
    assert registry["registryId"] == ACCOUNT
    assert registry["replicationConfiguration"] == {"rules": []}


def test_calls_are_traced(ecr, server):
    ecr.create_repository(repositoryName="traced")
    status, _, body = server.request("GET", "/_roto/traces?service=ecr")
    assert status == 200
    ops = [t["operation"] for t in json.loads(body)["traces"]]
    assert "CreateRepository" in ops


def test_lua_setup_creates_a_repository(tmp_path):
    from roto_server import RotoServer

    path = tmp_path / "setup.lua"
    path.write_text("""
        aws.ecr.CreateRepository{repositoryName = "seeded", imageTagMutability = "IMMUTABLE"}
        aws.ecr.SetRepositoryPolicy{repositoryName = "seeded",
          policyText = '{"Version":"2012-10-17","Statement":[]}'}
    """)
    with RotoServer("--ephemeral", "--setup", str(path)) as s:
        [repo] = s.client("ecr").describe_repositories()["repositories"]
        assert (repo["repositoryName"], repo["imageTagMutability"]) == ("seeded", "IMMUTABLE")
