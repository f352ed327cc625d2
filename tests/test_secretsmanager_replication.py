"""Secrets Manager replication: replicas are real secrets in other regions, kept in line
with their primary (values, labels, metadata, rotation), refusing writes of their own;
removed, promoted, or blocking the primary's deletion as in AWS."""

from __future__ import annotations

import io
import time
import zipfile

import pytest
from botocore.exceptions import ClientError

from test_secretsmanager import ROTATION_FUNCTION

PRIMARY, REPLICA, OTHER = "us-east-1", "eu-west-1", "us-west-2"
NOT_ON_REPLICA = "Operation not permitted on a replica secret. Call must be made in primary secret's region."


@pytest.fixture
def sm(client):
    return client("secretsmanager", region_name=PRIMARY)


@pytest.fixture
def replica_sm(client):
    return client("secretsmanager", region_name=REPLICA)


def error(excinfo):
    return excinfo.value.response["Error"]["Code"], excinfo.value.response["Error"]["Message"]


def in_region(arn, region):
    return arn.replace(f":secretsmanager:{PRIMARY}:", f":secretsmanager:{region}:")


def test_a_replica_is_a_real_secret_in_the_other_region(sm, replica_sm):
    created = sm.create_secret(Name="db", SecretString="pw-1", Description="the db")
    out = sm.replicate_secret_to_regions(SecretId="db", AddReplicaRegions=[{"Region": REPLICA}])
    assert out["ARN"] == created["ARN"]
    assert out["ReplicationStatus"] == [{
        "Region": REPLICA, "KmsKeyId": "alias/aws/secretsmanager", "Status": "InSync",
        "StatusMessage": "Replication succeeded",
    }]
    value = replica_sm.get_secret_value(SecretId="db")
    assert value["SecretString"] == "pw-1"
    assert value["ARN"] == in_region(created["ARN"], REPLICA)
    assert value["VersionId"] == created["VersionId"]
    assert replica_sm.get_secret_value(SecretId=value["ARN"])["SecretString"] == "pw-1"
    replica = replica_sm.describe_secret(SecretId="db")
    assert (replica["PrimaryRegion"], replica["Description"]) == (PRIMARY, "the db")
    assert "ReplicationStatus" not in replica
    primary = sm.describe_secret(SecretId="db")
    assert primary["PrimaryRegion"] == PRIMARY
    [status] = primary["ReplicationStatus"]
    assert status["Status"] == "InSync" and "LastAccessedDate" in status
    [listed] = replica_sm.list_secrets()["SecretList"]
    assert (listed["Name"], listed["PrimaryRegion"]) == ("db", PRIMARY)
    assert sm.list_secrets()["SecretList"][0]["PrimaryRegion"] == PRIMARY
    filtered = replica_sm.list_secrets(Filters=[{"Key": "primary-region", "Values": [PRIMARY]}])["SecretList"]
    assert [s["Name"] for s in filtered] == ["db"]


def test_secrets_that_are_not_replicated_name_no_primary_region(sm):
    sm.create_secret(Name="alone", SecretString="x")
    described = sm.describe_secret(SecretId="alone")
    assert "PrimaryRegion" not in described and "ReplicationStatus" not in described
    assert sm.list_secrets(Filters=[{"Key": "primary-region", "Values": [PRIMARY]}])["SecretList"] == []


def test_writes_to_the_primary_reach_its_replicas(sm, replica_sm):
    v1 = sm.create_secret(Name="db", SecretString="pw-1")["VersionId"]
    sm.replicate_secret_to_regions(SecretId="db", AddReplicaRegions=[{"Region": REPLICA}])
    v2 = sm.put_secret_value(SecretId="db", SecretString="pw-2")["VersionId"]
    assert replica_sm.get_secret_value(SecretId="db")["SecretString"] == "pw-2"
    assert replica_sm.get_secret_value(SecretId="db", VersionStage="AWSPREVIOUS")["SecretString"] == "pw-1"
    v3 = sm.update_secret(SecretId="db", SecretString="pw-3", Description="rotated by hand")["VersionId"]
    sm.tag_resource(SecretId="db", Tags=[{"Key": "team", "Value": "payments"}])
    sm.put_resource_policy(SecretId="db", ResourcePolicy='{"Version": "2012-10-17", "Statement": []}')
    sm.update_secret_version_stage(SecretId="db", VersionStage="AWSCURRENT", MoveToVersionId=v1, RemoveFromVersionId=v3)
    primary, replica = sm.describe_secret(SecretId="db"), replica_sm.describe_secret(SecretId="db")
    assert replica["VersionIdsToStages"] == primary["VersionIdsToStages"] == {
        v1: ["AWSCURRENT"], v3: ["AWSPREVIOUS"]}
    assert replica["Description"] == "rotated by hand"
    assert replica["Tags"] == [{"Key": "team", "Value": "payments"}]
    assert "Statement" in replica_sm.get_resource_policy(SecretId="db")["ResourcePolicy"]
    assert replica_sm.get_secret_value(SecretId="db")["SecretString"] == "pw-1"
    assert replica_sm.get_secret_value(SecretId="db", VersionId=v2)["SecretString"] == "pw-2"


def test_rotation_of_the_primary_reaches_the_replica(client, sm, replica_sm):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("rotate.py", ROTATION_FUNCTION)
    fn = client("lambda").create_function(
        FunctionName="rotator", Runtime="python3.12", Role="arn:aws:iam::000000000000:role/r",
        Handler="rotate.handler", Code={"ZipFile": buf.getvalue()},
    )["FunctionArn"]
    sm.create_secret(Name="rotated", SecretString="pw", AddReplicaRegions=[{"Region": REPLICA}])
    token = sm.rotate_secret(SecretId="rotated", RotationLambdaARN=fn, RotationRules={"AutomaticallyAfterDays": 7})["VersionId"]
    deadline = time.time() + 30
    while time.time() < deadline and "LastRotatedDate" not in replica_sm.describe_secret(SecretId="rotated"):
        time.sleep(0.1)
    replica = replica_sm.describe_secret(SecretId="rotated")
    assert "LastRotatedDate" in replica, replica
    assert replica["RotationEnabled"] is True and replica["RotationLambdaARN"] == fn
    assert replica["VersionIdsToStages"][token] == ["AWSCURRENT"]
    assert replica_sm.get_secret_value(SecretId="rotated")["SecretString"] == "pw-rotated"


def test_create_secret_with_replica_regions(sm, client):
    out = sm.create_secret(Name="multi", SecretBinary=b"\x00\x01",
                           AddReplicaRegions=[{"Region": REPLICA}, {"Region": OTHER}])
    assert [(s["Region"], s["Status"]) for s in out["ReplicationStatus"]] == [(REPLICA, "InSync"), (OTHER, "InSync")]
    for region in (REPLICA, OTHER):
        assert client("secretsmanager", region_name=region).get_secret_value(SecretId="multi")["SecretBinary"] == b"\x00\x01"


def test_replicas_use_their_own_kms_key(client, sm, replica_sm):
    kms = client("kms", region_name=REPLICA)
    key = kms.create_key()["KeyMetadata"]["KeyId"]
    sm.create_secret(Name="db", SecretString="pw")
    out = sm.replicate_secret_to_regions(SecretId="db", AddReplicaRegions=[{"Region": REPLICA, "KmsKeyId": key}])
    assert out["ReplicationStatus"][0]["KmsKeyId"] == key
    assert replica_sm.describe_secret(SecretId="db")["KmsKeyId"] == key
    assert replica_sm.get_secret_value(SecretId="db")["SecretString"] == "pw"
    kms.disable_key(KeyId=key)
    with pytest.raises(ClientError) as e:
        replica_sm.get_secret_value(SecretId="db")
    assert error(e)[0] == "DecryptionFailure"
    assert sm.get_secret_value(SecretId="db")["SecretString"] == "pw"
    # A write the disabled key cannot encrypt leaves the replica behind, and says so.
    sm.put_secret_value(SecretId="db", SecretString="pw-2")
    [status] = sm.describe_secret(SecretId="db")["ReplicationStatus"]
    assert status["Status"] == "Failed" and status["StatusMessage"].startswith("Replication failed: ")
    kms.enable_key(KeyId=key)
    sm.put_secret_value(SecretId="db", SecretString="pw-3")
    assert sm.describe_secret(SecretId="db")["ReplicationStatus"][0]["Status"] == "InSync"
    assert replica_sm.get_secret_value(SecretId="db")["SecretString"] == "pw-3"


def test_a_replica_that_cannot_be_encrypted_is_not_created(sm, replica_sm):
    sm.create_secret(Name="db", SecretString="pw")
    out = sm.replicate_secret_to_regions(
        SecretId="db", AddReplicaRegions=[{"Region": REPLICA, "KmsKeyId": "alias/missing"}])
    [status] = out["ReplicationStatus"]
    assert status["Status"] == "Failed" and status["StatusMessage"].startswith("Replication failed: ")
    with pytest.raises(ClientError) as e:
        replica_sm.describe_secret(SecretId="db")
    assert error(e)[0] == "ResourceNotFoundException"


def test_a_taken_name_in_the_replica_region_fails_unless_forced(sm, replica_sm):
    replica_sm.create_secret(Name="dup", SecretString="theirs")
    sm.create_secret(Name="dup", SecretString="ours")
    out = sm.replicate_secret_to_regions(SecretId="dup", AddReplicaRegions=[{"Region": REPLICA}])
    [status] = out["ReplicationStatus"]
    assert (status["Status"], status["StatusMessage"]) == (
        "Failed", f"Replication failed: Secret name simple already exists in region {REPLICA}.")
    assert replica_sm.get_secret_value(SecretId="dup")["SecretString"] == "theirs"
    assert "PrimaryRegion" not in replica_sm.describe_secret(SecretId="dup")
    replica_sm.put_secret_value(SecretId="dup", SecretString="still theirs")
    out = sm.replicate_secret_to_regions(SecretId="dup", AddReplicaRegions=[{"Region": REPLICA}],
                                         ForceOverwriteReplicaSecret=True)
    assert out["ReplicationStatus"][0]["Status"] == "InSync"
    assert replica_sm.get_secret_value(SecretId="dup")["SecretString"] == "ours"
    assert replica_sm.describe_secret(SecretId="dup")["PrimaryRegion"] == PRIMARY


def test_the_primary_region_and_unknown_regions_are_refused(sm):
    sm.create_secret(Name="db", SecretString="pw")
    for region in (PRIMARY, "mars-1"):
        with pytest.raises(ClientError) as e:
            sm.replicate_secret_to_regions(SecretId="db", AddReplicaRegions=[{"Region": region}])
        assert error(e) == ("InvalidParameterException", "Invalid replica region.")
    with pytest.raises(ClientError) as e:
        sm.create_secret(Name="new", SecretString="pw", AddReplicaRegions=[{"Region": PRIMARY}])
    assert error(e) == ("InvalidParameterException", "Invalid replica region.")
    assert [s["Name"] for s in sm.list_secrets()["SecretList"]] == ["db"]
    with pytest.raises(ClientError) as e:
        sm.replicate_secret_to_regions(SecretId="absent", AddReplicaRegions=[{"Region": REPLICA}])
    assert error(e)[0] == "ResourceNotFoundException"


def test_a_replica_refuses_writes_of_its_own(sm, replica_sm):
    sm.create_secret(Name="db", SecretString="pw", AddReplicaRegions=[{"Region": REPLICA}])
    writes = [
        lambda: replica_sm.put_secret_value(SecretId="db", SecretString="mine"),
        lambda: replica_sm.update_secret(SecretId="db", Description="mine"),
        lambda: replica_sm.tag_resource(SecretId="db", Tags=[{"Key": "k", "Value": "v"}]),
        lambda: replica_sm.untag_resource(SecretId="db", TagKeys=["k"]),
        lambda: replica_sm.put_resource_policy(SecretId="db", ResourcePolicy="{}"),
        lambda: replica_sm.delete_resource_policy(SecretId="db"),
        lambda: replica_sm.rotate_secret(SecretId="db", RotationLambdaARN="arn:aws:lambda:eu-west-1:000000000000:function:f"),
        lambda: replica_sm.cancel_rotate_secret(SecretId="db"),
        lambda: replica_sm.delete_secret(SecretId="db", ForceDeleteWithoutRecovery=True),
        lambda: replica_sm.restore_secret(SecretId="db"),
        lambda: replica_sm.replicate_secret_to_regions(SecretId="db", AddReplicaRegions=[{"Region": OTHER}]),
        lambda: replica_sm.remove_regions_from_replication(SecretId="db", RemoveReplicaRegions=[REPLICA]),
    ]
    for write in writes:
        with pytest.raises(ClientError) as e:
            write()
        assert error(e) == ("InvalidParameterException", NOT_ON_REPLICA)
    version = sm.describe_secret(SecretId="db")["VersionIdsToStages"]
    with pytest.raises(ClientError) as e:
        replica_sm.update_secret_version_stage(SecretId="db", VersionStage="x", MoveToVersionId=list(version)[0])
    assert error(e) == ("InvalidParameterException", NOT_ON_REPLICA)
    assert replica_sm.get_secret_value(SecretId="db")["SecretString"] == "pw"
    assert replica_sm.list_secret_version_ids(SecretId="db")["Versions"]
    assert replica_sm.batch_get_secret_value(SecretIdList=["db"])["SecretValues"][0]["SecretString"] == "pw"


def test_a_primary_with_replicas_cannot_be_deleted_until_they_are_removed(sm, replica_sm, client):
    arn = sm.create_secret(Name="db", SecretString="pw",
                           AddReplicaRegions=[{"Region": REPLICA}, {"Region": OTHER}])["ARN"]
    with pytest.raises(ClientError) as e:
        sm.delete_secret(SecretId="db")
    assert error(e) == ("InvalidParameterException",
                        f"You can't delete secret {arn} that still has replica regions [{REPLICA}, {OTHER}].")
    out = sm.remove_regions_from_replication(SecretId="db", RemoveReplicaRegions=[REPLICA])
    assert out["ARN"] == arn and [s["Region"] for s in out["ReplicationStatus"]] == [OTHER]
    with pytest.raises(ClientError) as e:
        replica_sm.get_secret_value(SecretId="db")
    assert error(e)[0] == "ResourceNotFoundException"
    assert client("secretsmanager", region_name=OTHER).get_secret_value(SecretId="db")["SecretString"] == "pw"
    out = sm.remove_regions_from_replication(SecretId="db", RemoveReplicaRegions=[OTHER])
    assert out["ReplicationStatus"] == []
    described = sm.describe_secret(SecretId="db")
    assert "PrimaryRegion" not in described and "ReplicationStatus" not in described
    assert sm.delete_secret(SecretId="db", ForceDeleteWithoutRecovery=True)["Name"] == "db"


def test_stop_replication_promotes_the_replica_to_a_standalone_secret(sm, replica_sm):
    sm.create_secret(Name="db", SecretString="pw", AddReplicaRegions=[{"Region": REPLICA}])
    replica_arn = replica_sm.describe_secret(SecretId="db")["ARN"]
    assert replica_sm.stop_replication_to_replica(SecretId="db")["ARN"] == replica_arn
    promoted = replica_sm.describe_secret(SecretId="db")
    assert promoted["ARN"] == replica_arn and "PrimaryRegion" not in promoted
    primary = sm.describe_secret(SecretId="db")
    assert "ReplicationStatus" not in primary and "PrimaryRegion" not in primary
    replica_sm.put_secret_value(SecretId="db", SecretString="mine now")
    sm.put_secret_value(SecretId="db", SecretString="primary's")
    assert replica_sm.get_secret_value(SecretId="db")["SecretString"] == "mine now"
    with pytest.raises(ClientError) as e:
        sm.stop_replication_to_replica(SecretId="db")
    assert error(e)[0] == "InvalidParameterException"
