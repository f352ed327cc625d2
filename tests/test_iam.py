"""IAM through boto3, the AWS CLI and raw query requests, with its STS links."""

from __future__ import annotations

import json
import re
import urllib.parse

import boto3
import pytest
from botocore.config import Config
from botocore.exceptions import ClientError

ACCOUNT = "000000000000"
TRUST = json.dumps({
    "Version": "2012-10-17",
    "Statement": [{"Effect": "Allow", "Principal": {"Service": "lambda.amazonaws.com"}, "Action": "sts:AssumeRole"}],
})
POLICY = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "s3:*", "Resource": "*"}]}
FORM = {"Content-Type": "application/x-www-form-urlencoded"}


def error_of(excinfo):
    err = excinfo.value.response
    return err["Error"]["Code"], err["Error"]["Message"], err["ResponseMetadata"]["HTTPStatusCode"]


def keyed_client(server, service, key, secret="secret"):
    return boto3.client(service, endpoint_url=server.endpoint, region_name="us-east-1",
                        aws_access_key_id=key, aws_secret_access_key=secret,
                        config=Config(retries={"max_attempts": 1}))


@pytest.fixture
def iam(client):
    return client("iam")


# Users

def test_create_user_returns_an_aida_id_and_a_regionless_arn(iam):
    user = iam.create_user(UserName="alice", Path="/team/")["User"]
    assert re.fullmatch(r"AIDA[A-Z2-7]{17}", user["UserId"])
    assert user["Arn"] == f"arn:aws:iam::{ACCOUNT}:user/team/alice"
    assert user["Path"] == "/team/"
    got = iam.get_user(UserName="alice")["User"]
    assert got["UserId"] == user["UserId"] and got["CreateDate"] == user["CreateDate"]


def test_user_names_are_unique_regardless_of_case(iam):
    iam.create_user(UserName="Alice")
    with pytest.raises(ClientError) as e:
        iam.create_user(UserName="alice")
    assert error_of(e) == ("EntityAlreadyExists", "User with name alice already exists.", 409)
    assert iam.get_user(UserName="ALICE")["User"]["UserName"] == "Alice"


def test_missing_user_is_no_such_entity_404(iam):
    with pytest.raises(ClientError) as e:
        iam.get_user(UserName="nobody")
    assert error_of(e) == ("NoSuchEntity", "The user with name nobody cannot be found.", 404)


def test_invalid_names_and_paths_are_validation_errors(iam):
    with pytest.raises(ClientError) as e:
        iam.create_user(UserName="bad name")
    code, message, status = error_of(e)
    assert (code, status) == ("ValidationError", 400)
    assert "at 'userName' failed to satisfy constraint: Member must satisfy regular expression pattern" in message
    with pytest.raises(ClientError) as e:
        iam.create_user(UserName="x" * 65)
    assert "Member must have length less than or equal to 64" in error_of(e)[1]
    with pytest.raises(ClientError) as e:
        iam.create_user(UserName="ok", Path="team")
    assert error_of(e)[0] == "ValidationError"


def test_iam_state_is_global_across_regions(client):
    client("iam", region_name="eu-west-1").create_user(UserName="everywhere")
    assert client("iam", region_name="ap-south-1").get_user(UserName="everywhere")["User"]["Arn"] == (
        f"arn:aws:iam::{ACCOUNT}:user/everywhere")


def test_list_users_paginates_with_marker_in_name_order(iam):
    for name in ["dave", "alice", "carol", "bob", "erin"]:
        iam.create_user(UserName=name)
    first = iam.list_users(MaxItems=2)
    assert [u["UserName"] for u in first["Users"]] == ["alice", "bob"]
    assert first["IsTruncated"] is True
    second = iam.list_users(MaxItems=2, Marker=first["Marker"])
    assert [u["UserName"] for u in second["Users"]] == ["carol", "dave"]
    third = iam.list_users(MaxItems=2, Marker=second["Marker"])
    assert [u["UserName"] for u in third["Users"]] == ["erin"]
    assert third["IsTruncated"] is False and "Marker" not in third
    names = [u["UserName"] for page in iam.get_paginator("list_users").paginate(PaginationConfig={"PageSize": 2})
             for u in page["Users"]]
    assert names == ["alice", "bob", "carol", "dave", "erin"]


def test_list_users_filters_by_path_prefix(iam):
    iam.create_user(UserName="a", Path="/eng/")
    iam.create_user(UserName="b", Path="/ops/")
    assert [u["UserName"] for u in iam.list_users(PathPrefix="/eng")["Users"]] == ["a"]


def test_update_user_renames_and_keeps_its_keys_and_groups(iam):
    iam.create_user(UserName="old")
    iam.create_group(GroupName="g")
    iam.add_user_to_group(GroupName="g", UserName="old")
    key = iam.create_access_key(UserName="old")["AccessKey"]["AccessKeyId"]
    iam.update_user(UserName="old", NewUserName="new", NewPath="/moved/")
    assert iam.get_user(UserName="new")["User"]["Arn"].endswith(":user/moved/new")
    assert [k["AccessKeyId"] for k in iam.list_access_keys(UserName="new")["AccessKeyMetadata"]] == [key]
    assert [u["UserName"] for u in iam.get_group(GroupName="g")["Users"]] == ["new"]
    with pytest.raises(ClientError) as e:
        iam.get_user(UserName="old")
    assert error_of(e)[0] == "NoSuchEntity"


def test_delete_user_is_refused_while_things_hang_off_it(iam):
    iam.create_user(UserName="u")
    iam.put_user_policy(UserName="u", PolicyName="inline", PolicyDocument=json.dumps(POLICY))
    with pytest.raises(ClientError) as e:
        iam.delete_user(UserName="u")
    assert error_of(e) == ("DeleteConflict", "Cannot delete entity, must delete policies first.", 409)
    iam.delete_user_policy(UserName="u", PolicyName="inline")
    iam.attach_user_policy(UserName="u", PolicyArn="arn:aws:iam::aws:policy/ReadOnlyAccess")
    with pytest.raises(ClientError) as e:
        iam.delete_user(UserName="u")
    assert error_of(e)[1] == "Cannot delete entity, must detach all policies first."
    iam.detach_user_policy(UserName="u", PolicyArn="arn:aws:iam::aws:policy/ReadOnlyAccess")
    key = iam.create_access_key(UserName="u")["AccessKey"]["AccessKeyId"]
    with pytest.raises(ClientError) as e:
        iam.delete_user(UserName="u")
    assert error_of(e)[1] == "Cannot delete entity, must delete access keys first."
    iam.delete_access_key(UserName="u", AccessKeyId=key)
    iam.delete_user(UserName="u")
    assert iam.list_users()["Users"] == []


def test_user_tags_are_added_replaced_listed_and_removed(iam):
    iam.create_user(UserName="u", Tags=[{"Key": "env", "Value": "dev"}])
    iam.tag_user(UserName="u", Tags=[{"Key": "env", "Value": "prod"}, {"Key": "team", "Value": "a"}])
    assert iam.list_user_tags(UserName="u")["Tags"] == [{"Key": "env", "Value": "prod"}, {"Key": "team", "Value": "a"}]
    iam.untag_user(UserName="u", TagKeys=["env"])
    assert iam.get_user(UserName="u")["User"]["Tags"] == [{"Key": "team", "Value": "a"}]
    with pytest.raises(ClientError) as e:
        iam.tag_user(UserName="u", Tags=[{"Key": "k", "Value": "1"}, {"Key": "K", "Value": "2"}])
    assert error_of(e) == ("InvalidInput", "Duplicate tag keys found. Please note that Tag keys are case insensitive.", 400)


# Groups

def test_group_membership_is_listed_both_ways_and_blocks_group_deletion(iam):
    iam.create_group(GroupName="devs")
    iam.create_user(UserName="alice")
    iam.add_user_to_group(GroupName="devs", UserName="alice")
    group = iam.get_group(GroupName="devs")
    assert group["Group"]["Arn"] == f"arn:aws:iam::{ACCOUNT}:group/devs"
    assert re.fullmatch(r"AGPA[A-Z2-7]{17}", group["Group"]["GroupId"])
    assert [u["UserName"] for u in group["Users"]] == ["alice"]
    assert [g["GroupName"] for g in iam.list_groups_for_user(UserName="alice")["Groups"]] == ["devs"]
    with pytest.raises(ClientError) as e:
        iam.delete_group(GroupName="devs")
    assert error_of(e) == ("DeleteConflict", "Cannot delete entity, must remove users from group first.", 409)
    iam.remove_user_from_group(GroupName="devs", UserName="alice")
    iam.delete_group(GroupName="devs")
    with pytest.raises(ClientError) as e:
        iam.get_group(GroupName="devs")
    assert error_of(e) == ("NoSuchEntity", "The group with name devs cannot be found.", 404)


def test_adding_a_missing_user_to_a_group_is_no_such_entity(iam):
    iam.create_group(GroupName="g")
    with pytest.raises(ClientError) as e:
        iam.add_user_to_group(GroupName="g", UserName="ghost")
    assert error_of(e) == ("NoSuchEntity", "The user with name ghost cannot be found.", 404)
    with pytest.raises(ClientError) as e:
        iam.create_group(GroupName="G")
    assert error_of(e) == ("EntityAlreadyExists", "Group with name G already exists.", 409)


# Roles

def test_create_role_stores_trust_policy_duration_description_and_tags(iam):
    role = iam.create_role(RoleName="app", AssumeRolePolicyDocument=TRUST, MaxSessionDuration=7200,
                           Description="the app", Tags=[{"Key": "k", "Value": "v"}])["Role"]
    assert re.fullmatch(r"AROA[A-Z2-7]{17}", role["RoleId"])
    assert role["Arn"] == f"arn:aws:iam::{ACCOUNT}:role/app"
    got = iam.get_role(RoleName="app")["Role"]
    assert got["AssumeRolePolicyDocument"] == json.loads(TRUST)
    assert got["MaxSessionDuration"] == 7200
    assert got["Description"] == "the app"
    assert got["Tags"] == [{"Key": "k", "Value": "v"}]
    assert iam.list_role_tags(RoleName="app")["Tags"] == [{"Key": "k", "Value": "v"}]
    iam.update_role(RoleName="app", MaxSessionDuration=3600, Description="changed")
    iam.update_assume_role_policy(RoleName="app", PolicyDocument=json.dumps({"Version": "2012-10-17", "Statement": []}))
    got = iam.get_role(RoleName="app")["Role"]
    assert (got["MaxSessionDuration"], got["Description"], got["AssumeRolePolicyDocument"]["Statement"]) == (3600, "changed", [])


def test_role_documents_are_url_encoded_on_the_wire(server, iam):
    iam.create_role(RoleName="wire", AssumeRolePolicyDocument=TRUST)
    status, _, body = server.request("POST", "/", "Action=GetRole&Version=2010-05-08&RoleName=wire", FORM)
    assert status == 200
    text = body.decode()
    encoded = re.search(r"<AssumeRolePolicyDocument>(.*)</AssumeRolePolicyDocument>", text).group(1)
    assert encoded.startswith("%7B%22Version%22%3A%20%222012-10-17%22")
    assert urllib.parse.unquote(encoded) == TRUST


def test_malformed_trust_policy_and_out_of_range_duration_are_rejected(server, iam):
    with pytest.raises(ClientError) as e:
        iam.create_role(RoleName="r", AssumeRolePolicyDocument="{not json")
    assert error_of(e) == ("MalformedPolicyDocument", "This policy contains invalid Json", 400)
    body = "Action=CreateRole&Version=2010-05-08&RoleName=r&MaxSessionDuration=60&AssumeRolePolicyDocument=" + (
        urllib.parse.quote(TRUST))
    status, _, text = server.request("POST", "/", body, FORM)
    assert status == 400
    assert "<Code>ValidationError</Code>" in text.decode()
    assert "Member must have value greater than or equal to 3600" in text.decode()
    with pytest.raises(ClientError) as e:
        iam.get_role(RoleName="r")
    assert error_of(e) == ("NoSuchEntity", "The role with name r cannot be found.", 404)


def test_delete_role_is_refused_while_attached_or_in_a_profile(iam):
    iam.create_role(RoleName="r", AssumeRolePolicyDocument=TRUST)
    iam.create_instance_profile(InstanceProfileName="p")
    iam.add_role_to_instance_profile(InstanceProfileName="p", RoleName="r")
    with pytest.raises(ClientError) as e:
        iam.delete_role(RoleName="r")
    assert error_of(e) == ("DeleteConflict", "Cannot delete entity, must remove roles from instance profile first.", 409)
    iam.remove_role_from_instance_profile(InstanceProfileName="p", RoleName="r")
    iam.put_role_policy(RoleName="r", PolicyName="inline", PolicyDocument=json.dumps(POLICY))
    with pytest.raises(ClientError) as e:
        iam.delete_role(RoleName="r")
    assert error_of(e)[1] == "Cannot delete entity, must delete policies first."
    iam.delete_role_policy(RoleName="r", PolicyName="inline")
    iam.delete_role(RoleName="r")
    assert iam.list_roles()["Roles"] == []


def test_service_linked_roles_live_under_the_service_path_and_are_protected(iam):
    role = iam.create_service_linked_role(AWSServiceName="autoscaling.amazonaws.com")["Role"]
    assert role["RoleName"] == "AWSServiceRoleForAutoScaling"
    assert role["Path"] == "/aws-service-role/autoscaling.amazonaws.com/"
    assert role["AssumeRolePolicyDocument"]["Statement"][0]["Principal"] == {"Service": ["autoscaling.amazonaws.com"]}
    with pytest.raises(ClientError) as e:
        iam.delete_role(RoleName="AWSServiceRoleForAutoScaling")
    assert error_of(e)[0] == "UnmodifiableEntity"
    task = iam.delete_service_linked_role(RoleName="AWSServiceRoleForAutoScaling")["DeletionTaskId"]
    assert task.startswith("task/aws-service-role/autoscaling.amazonaws.com/AWSServiceRoleForAutoScaling/")
    assert iam.get_service_linked_role_deletion_status(DeletionTaskId=task)["Status"] == "SUCCEEDED"


# Instance profiles

def test_instance_profiles_hold_one_role(iam):
    iam.create_role(RoleName="r1", AssumeRolePolicyDocument=TRUST)
    iam.create_role(RoleName="r2", AssumeRolePolicyDocument=TRUST)
    profile = iam.create_instance_profile(InstanceProfileName="web", Path="/ec2/")["InstanceProfile"]
    assert profile["Arn"] == f"arn:aws:iam::{ACCOUNT}:instance-profile/ec2/web"
    assert re.fullmatch(r"AIPA[A-Z2-7]{17}", profile["InstanceProfileId"]) and profile["Roles"] == []
    iam.add_role_to_instance_profile(InstanceProfileName="web", RoleName="r1")
    with pytest.raises(ClientError) as e:
        iam.add_role_to_instance_profile(InstanceProfileName="web", RoleName="r2")
    assert error_of(e) == ("LimitExceeded", "Cannot exceed quota for InstanceSessionsPerInstanceProfile: 1", 409)
    got = iam.get_instance_profile(InstanceProfileName="web")["InstanceProfile"]
    assert [r["RoleName"] for r in got["Roles"]] == ["r1"]
    assert [p["InstanceProfileName"] for p in iam.list_instance_profiles_for_role(RoleName="r1")["InstanceProfiles"]] == ["web"]
    with pytest.raises(ClientError) as e:
        iam.delete_instance_profile(InstanceProfileName="web")
    assert error_of(e)[0] == "DeleteConflict"
    with pytest.raises(ClientError) as e:
        iam.create_instance_profile(InstanceProfileName="web")
    assert error_of(e) == ("EntityAlreadyExists", "Instance Profile web already exists.", 409)
    with pytest.raises(ClientError) as e:
        iam.get_instance_profile(InstanceProfileName="nope")
    assert error_of(e) == ("NoSuchEntity", "Instance Profile nope cannot be found.", 404)


# Managed policies

def test_managed_policy_versions_move_the_default_and_stop_at_five(iam):
    arn = iam.create_policy(PolicyName="p", PolicyDocument=json.dumps(POLICY), Description="d")["Policy"]["Arn"]
    assert arn == f"arn:aws:iam::{ACCOUNT}:policy/p"
    for i in range(4):
        doc = dict(POLICY, Statement=[dict(POLICY["Statement"][0], Resource=f"arn:aws:s3:::b{i}")])
        v = iam.create_policy_version(PolicyArn=arn, PolicyDocument=json.dumps(doc), SetAsDefault=(i == 1))["PolicyVersion"]
        assert v["VersionId"] == f"v{i + 2}"
    with pytest.raises(ClientError) as e:
        iam.create_policy_version(PolicyArn=arn, PolicyDocument=json.dumps(POLICY))
    assert error_of(e) == ("LimitExceeded", "A managed policy can have up to 5 versions. Before you create a new version, you must delete an existing version.", 409)
    policy = iam.get_policy(PolicyArn=arn)["Policy"]
    assert policy["DefaultVersionId"] == "v3" and policy["Description"] == "d"
    versions = iam.list_policy_versions(PolicyArn=arn)["Versions"]
    assert [(v["VersionId"], v["IsDefaultVersion"]) for v in versions] == [
        ("v5", False), ("v4", False), ("v3", True), ("v2", False), ("v1", False)]
    got = iam.get_policy_version(PolicyArn=arn, VersionId="v3")["PolicyVersion"]
    assert got["Document"]["Statement"][0]["Resource"] == "arn:aws:s3:::b1"
    with pytest.raises(ClientError) as e:
        iam.delete_policy_version(PolicyArn=arn, VersionId="v3")
    assert error_of(e) == ("DeleteConflict", "Cannot delete the default version of a policy.", 409)
    iam.delete_policy_version(PolicyArn=arn, VersionId="v5")
    assert iam.create_policy_version(PolicyArn=arn, PolicyDocument=json.dumps(POLICY))["PolicyVersion"]["VersionId"] == "v6"
    iam.set_default_policy_version(PolicyArn=arn, VersionId="v1")
    assert iam.get_policy(PolicyArn=arn)["Policy"]["DefaultVersionId"] == "v1"
    with pytest.raises(ClientError) as e:
        iam.get_policy_version(PolicyArn=arn, VersionId="v9")
    assert error_of(e)[0] == "NoSuchEntity"


def test_malformed_and_duplicate_policies_are_rejected(iam):
    with pytest.raises(ClientError) as e:
        iam.create_policy(PolicyName="p", PolicyDocument="{oops")
    assert error_of(e) == ("MalformedPolicyDocument", "Syntax errors in policy.", 400)
    iam.create_policy(PolicyName="p", PolicyDocument=json.dumps(POLICY))
    with pytest.raises(ClientError) as e:
        iam.create_policy(PolicyName="p", Path="/other/", PolicyDocument=json.dumps(POLICY))
    assert error_of(e) == ("EntityAlreadyExists", "A policy called p already exists. Duplicate names are not allowed.", 409)
    missing = f"arn:aws:iam::{ACCOUNT}:policy/missing"
    with pytest.raises(ClientError) as e:
        iam.get_policy(PolicyArn=missing)
    assert error_of(e) == ("NoSuchEntity", f"Policy {missing} was not found.", 404)


def test_attached_policies_are_listed_counted_and_block_deletion(iam):
    arn = iam.create_policy(PolicyName="p", PolicyDocument=json.dumps(POLICY))["Policy"]["Arn"]
    iam.create_user(UserName="u")
    iam.create_group(GroupName="g")
    iam.create_role(RoleName="r", AssumeRolePolicyDocument=TRUST)
    iam.attach_user_policy(UserName="u", PolicyArn=arn)
    iam.attach_group_policy(GroupName="g", PolicyArn=arn)
    iam.attach_role_policy(RoleName="r", PolicyArn=arn)
    iam.attach_role_policy(RoleName="r", PolicyArn="arn:aws:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole")
    assert iam.get_policy(PolicyArn=arn)["Policy"]["AttachmentCount"] == 3
    attached = iam.list_attached_role_policies(RoleName="r")["AttachedPolicies"]
    assert sorted(p["PolicyName"] for p in attached) == ["AWSLambdaBasicExecutionRole", "p"]
    assert iam.list_attached_role_policies(RoleName="r", PathPrefix="/service-role/")["AttachedPolicies"] == [
        {"PolicyName": "AWSLambdaBasicExecutionRole",
         "PolicyArn": "arn:aws:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole"}]
    entities = iam.list_entities_for_policy(PolicyArn=arn)
    assert [x["UserName"] for x in entities["PolicyUsers"]] == ["u"]
    assert [x["GroupName"] for x in entities["PolicyGroups"]] == ["g"]
    assert [x["RoleName"] for x in entities["PolicyRoles"]] == ["r"]
    only_roles = iam.list_entities_for_policy(PolicyArn=arn, EntityFilter="Role")
    assert (only_roles["PolicyUsers"], len(only_roles["PolicyRoles"])) == ([], 1)
    assert [p["PolicyName"] for p in iam.list_policies(Scope="Local", OnlyAttached=True)["Policies"]] == ["p"]
    with pytest.raises(ClientError) as e:
        iam.delete_policy(PolicyArn=arn)
    assert error_of(e) == ("DeleteConflict", "Cannot delete a policy attached to entities.", 409)
    for detach in (lambda: iam.detach_user_policy(UserName="u", PolicyArn=arn),
                   lambda: iam.detach_group_policy(GroupName="g", PolicyArn=arn),
                   lambda: iam.detach_role_policy(RoleName="r", PolicyArn=arn)):
        detach()
    with pytest.raises(ClientError) as e:
        iam.detach_role_policy(RoleName="r", PolicyArn=arn)
    assert error_of(e) == ("NoSuchEntity", f"Policy {arn} was not found.", 404)
    iam.delete_policy(PolicyArn=arn)
    assert iam.list_policies(Scope="Local")["Policies"] == []


def test_attaching_a_missing_policy_is_no_such_entity(iam):
    iam.create_user(UserName="u")
    arn = f"arn:aws:iam::{ACCOUNT}:policy/ghost"
    with pytest.raises(ClientError) as e:
        iam.attach_user_policy(UserName="u", PolicyArn=arn)
    assert error_of(e) == ("NoSuchEntity", f"Policy {arn} does not exist or is not attachable.", 404)


def test_list_attached_policies_paginates(iam):
    iam.create_user(UserName="u")
    for i in range(5):
        arn = iam.create_policy(PolicyName=f"p{i}", PolicyDocument=json.dumps(POLICY))["Policy"]["Arn"]
        iam.attach_user_policy(UserName="u", PolicyArn=arn)
    first = iam.list_attached_user_policies(UserName="u", MaxItems=3)
    assert first["IsTruncated"] and [p["PolicyName"] for p in first["AttachedPolicies"]] == ["p0", "p1", "p2"]
    rest = iam.list_attached_user_policies(UserName="u", MaxItems=3, Marker=first["Marker"])
    assert not rest["IsTruncated"] and [p["PolicyName"] for p in rest["AttachedPolicies"]] == ["p3", "p4"]


def test_policy_tags_round_trip(iam):
    arn = iam.create_policy(PolicyName="p", PolicyDocument=json.dumps(POLICY), Tags=[{"Key": "a", "Value": "1"}])["Policy"]["Arn"]
    iam.tag_policy(PolicyArn=arn, Tags=[{"Key": "b", "Value": "2"}])
    assert iam.list_policy_tags(PolicyArn=arn)["Tags"] == [{"Key": "a", "Value": "1"}, {"Key": "b", "Value": "2"}]
    iam.untag_policy(PolicyArn=arn, TagKeys=["a"])
    assert iam.get_policy(PolicyArn=arn)["Policy"]["Tags"] == [{"Key": "b", "Value": "2"}]


# Inline policies

@pytest.mark.parametrize("kind", ["user", "group", "role"])
def test_inline_policies_round_trip_for_each_kind(iam, kind):
    name_arg = {"user": "UserName", "group": "GroupName", "role": "RoleName"}[kind]
    if kind == "role":
        iam.create_role(RoleName="e", AssumeRolePolicyDocument=TRUST)
    else:
        getattr(iam, f"create_{kind}")(**{name_arg: "e"})
    put = getattr(iam, f"put_{kind}_policy")
    put(**{name_arg: "e"}, PolicyName="b", PolicyDocument=json.dumps(POLICY))
    put(**{name_arg: "e"}, PolicyName="a", PolicyDocument=json.dumps(POLICY))
    got = getattr(iam, f"get_{kind}_policy")(**{name_arg: "e"}, PolicyName="b")
    assert got[name_arg] == "e" and got["PolicyName"] == "b" and got["PolicyDocument"] == POLICY
    assert getattr(iam, f"list_{kind}_policies")(**{name_arg: "e"})["PolicyNames"] == ["a", "b"]
    getattr(iam, f"delete_{kind}_policy")(**{name_arg: "e"}, PolicyName="b")
    with pytest.raises(ClientError) as e:
        getattr(iam, f"get_{kind}_policy")(**{name_arg: "e"}, PolicyName="b")
    assert error_of(e) == ("NoSuchEntity", f"The {kind} policy with name b cannot be found.", 404)
    with pytest.raises(ClientError) as e:
        put(**{name_arg: "e"}, PolicyName="bad", PolicyDocument="nope")
    assert error_of(e) == ("MalformedPolicyDocument", "Syntax errors in policy.", 400)


# Access keys and STS

def test_access_keys_are_listed_updated_limited_and_deleted(iam):
    iam.create_user(UserName="u")
    key = iam.create_access_key(UserName="u")["AccessKey"]
    assert re.fullmatch(r"AKIA[A-Z2-7]{16}", key["AccessKeyId"]) and len(key["SecretAccessKey"]) == 40
    assert key["Status"] == "Active" and key["UserName"] == "u"
    iam.create_access_key(UserName="u")
    with pytest.raises(ClientError) as e:
        iam.create_access_key(UserName="u")
    assert error_of(e) == ("LimitExceeded", "Cannot exceed quota for AccessKeysPerUser: 2", 409)
    iam.update_access_key(UserName="u", AccessKeyId=key["AccessKeyId"], Status="Inactive")
    listed = {k["AccessKeyId"]: k for k in iam.list_access_keys(UserName="u")["AccessKeyMetadata"]}
    assert listed[key["AccessKeyId"]]["Status"] == "Inactive" and "SecretAccessKey" not in listed[key["AccessKeyId"]]
    assert iam.get_access_key_last_used(AccessKeyId=key["AccessKeyId"])["UserName"] == "u"
    iam.delete_access_key(UserName="u", AccessKeyId=key["AccessKeyId"])
    with pytest.raises(ClientError) as e:
        iam.delete_access_key(UserName="u", AccessKeyId=key["AccessKeyId"])
    assert error_of(e) == ("NoSuchEntity", f"The Access Key with id {key['AccessKeyId']} cannot be found.", 404)


def test_created_access_keys_sign_as_the_iam_user(server, iam):
    user = iam.create_user(UserName="deployer", Path="/ci/")["User"]
    key = iam.create_access_key(UserName="deployer")["AccessKey"]
    as_user = keyed_client(server, "sts", key["AccessKeyId"], key["SecretAccessKey"])
    identity = as_user.get_caller_identity()
    assert identity["Arn"] == f"arn:aws:iam::{ACCOUNT}:user/ci/deployer"
    assert identity["UserId"] == user["UserId"]
    assert identity["Account"] == ACCOUNT
    me = keyed_client(server, "iam", key["AccessKeyId"], key["SecretAccessKey"]).get_user()["User"]
    assert me["UserName"] == "deployer"


def test_access_keys_route_to_the_account_that_created_them(server, client):
    root = keyed_client(server, "iam", "111122223333")
    root.create_user(UserName="other")
    key = root.create_access_key(UserName="other")["AccessKey"]
    identity = keyed_client(server, "sts", key["AccessKeyId"]).get_caller_identity()
    assert identity["Account"] == "111122223333"
    assert identity["Arn"] == "arn:aws:iam::111122223333:user/other"
    assert client("iam").list_users()["Users"] == []
    assert [u["UserName"] for u in keyed_client(server, "iam", key["AccessKeyId"]).list_users()["Users"]] == ["other"]


def test_deleted_or_inactive_keys_are_refused_by_sts(server, iam):
    iam.create_user(UserName="u")
    key = iam.create_access_key(UserName="u")["AccessKey"]["AccessKeyId"]
    iam.update_access_key(UserName="u", AccessKeyId=key, Status="Inactive")
    with pytest.raises(ClientError) as e:
        keyed_client(server, "sts", key).get_caller_identity()
    assert error_of(e) == ("InvalidClientTokenId", "The security token included in the request is invalid.", 403)


def test_get_user_without_a_name_is_the_root_user_for_root_credentials(iam):
    user = iam.get_user()["User"]
    assert user["Arn"] == f"arn:aws:iam::{ACCOUNT}:root" and user["UserId"] == ACCOUNT


def test_assume_role_uses_the_iam_role_id_and_its_max_session_duration(client):
    iam, sts = client("iam"), client("sts")
    role = iam.create_role(RoleName="deploy", AssumeRolePolicyDocument=TRUST, MaxSessionDuration=7200)["Role"]
    out = sts.assume_role(RoleArn=role["Arn"], RoleSessionName="sess", DurationSeconds=7200)
    assert out["AssumedRoleUser"]["AssumedRoleId"] == f"{role['RoleId']}:sess"
    with pytest.raises(ClientError) as e:
        sts.assume_role(RoleArn=role["Arn"], RoleSessionName="sess", DurationSeconds=7201)
    assert error_of(e) == ("ValidationError", "The requested DurationSeconds exceeds the MaxSessionDuration set for this role.", 400)


def test_assume_role_of_a_role_iam_does_not_have_is_access_denied(client):
    role = "arn:aws:iam::123456789012:role/elsewhere"
    with pytest.raises(ClientError) as e:
        client("sts").assume_role(RoleArn=role, RoleSessionName="sess")
    assert error_of(e) == (
        "AccessDenied",
        f"User: arn:aws:iam::{ACCOUNT}:root is not authorized to perform: sts:AssumeRole on resource: {role}", 403)


# Account, CLI, wire

def test_account_summary_counts_entities(iam):
    iam.create_user(UserName="u")
    iam.create_role(RoleName="r", AssumeRolePolicyDocument=TRUST)
    summary = iam.get_account_summary()["SummaryMap"]
    assert (summary["Users"], summary["Roles"], summary["Groups"]) == (1, 1, 0)
    assert summary["AccessKeysPerUserQuota"] == 2


def test_cli_creates_a_role_attaches_a_policy_and_reads_it_back(aws, tmp_path):
    trust = tmp_path / "trust.json"
    trust.write_text(TRUST)
    role = json.loads(aws("iam", "create-role", "--role-name", "cli-role",
                          "--assume-role-policy-document", f"file://{trust}").stdout)["Role"]
    assert role["AssumeRolePolicyDocument"] == json.loads(TRUST)
    aws("iam", "attach-role-policy", "--role-name", "cli-role",
        "--policy-arn", "arn:aws:iam::aws:policy/ReadOnlyAccess")
    attached = json.loads(aws("iam", "list-attached-role-policies", "--role-name", "cli-role").stdout)
    assert attached["AttachedPolicies"] == [{"PolicyName": "ReadOnlyAccess", "PolicyArn": "arn:aws:iam::aws:policy/ReadOnlyAccess"}]
    failed = aws("iam", "get-role", "--role-name", "missing", check=False)
    assert failed.returncode != 0 and "NoSuchEntity" in failed.stderr


def test_errors_are_query_xml_with_sender_type(server):
    status, _, body = server.request("POST", "/", "Action=GetUser&Version=2010-05-08&UserName=ghost", FORM)
    assert status == 404
    text = body.decode()
    assert "<Type>Sender</Type><Code>NoSuchEntity</Code>" in text
    assert 'xmlns="https://iam.amazonaws.com/doc/2010-05-08/"' in text


# Policy grammar, login profiles, permissions boundaries, identity providers

@pytest.mark.parametrize("document,message", [
    ({"Statement": [{"Effect": "Allow", "Action": "s3:*", "Resource": "*"}]},
     "Policy document must be version 2012-10-17 or greater."),
    ({"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Resource": "*"}]},
     "Policy statement must contain actions."),
    ({"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "s3:*"}]},
     "Policy statement must contain resources."),
    ({"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "s3:*", "Resource": "*", "Principal": "*"}]},
     "Policy document should not specify a principal."),
    ({"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "GetObject", "Resource": "*"}]},
     "Actions/Conditions must be prefaced by a vendor, e.g., iam, sdb, ec2, etc."),
    ({"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "s3:*", "Resource": "my-bucket"}]},
     'Resource my-bucket must be in ARN format or "*".'),
    ({"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "s3:*", "Resource": "*", "Bogus": 1}]},
     "Syntax errors in policy."),
])
def test_managed_policy_grammar_is_checked_in_iam_words(iam, document, message):
    with pytest.raises(ClientError) as e:
        iam.create_policy(PolicyName="p", PolicyDocument=json.dumps(document))
    assert error_of(e) == ("MalformedPolicyDocument", message, 400)


def test_inline_policies_may_omit_the_version(iam):
    iam.create_user(UserName="u")
    doc = {"Statement": [{"Effect": "Allow", "Action": "s3:*", "Resource": "*"}]}
    iam.put_user_policy(UserName="u", PolicyName="p", PolicyDocument=json.dumps(doc))
    assert iam.get_user_policy(UserName="u", PolicyName="p")["PolicyDocument"] == doc


def test_login_profiles_are_created_read_updated_and_block_user_deletion(iam):
    iam.create_user(UserName="u")
    profile = iam.create_login_profile(UserName="u", Password="Pa55word!", PasswordResetRequired=True)["LoginProfile"]
    assert profile["UserName"] == "u" and profile["PasswordResetRequired"] is True
    with pytest.raises(ClientError) as e:
        iam.create_login_profile(UserName="u", Password="Pa55word!")
    assert error_of(e) == ("EntityAlreadyExists", "Login Profile for user u already exists.", 409)
    iam.update_login_profile(UserName="u", PasswordResetRequired=False)
    assert iam.get_login_profile(UserName="u")["LoginProfile"]["PasswordResetRequired"] is False
    with pytest.raises(ClientError) as e:
        iam.delete_user(UserName="u")
    assert error_of(e) == ("DeleteConflict", "Cannot delete entity, must delete login profile first.", 409)
    iam.delete_login_profile(UserName="u")
    with pytest.raises(ClientError) as e:
        iam.get_login_profile(UserName="u")
    assert error_of(e) == ("NoSuchEntity", "Login Profile for User u cannot be found.", 404)
    iam.delete_user(UserName="u")


def test_permissions_boundaries_are_set_shown_counted_and_removed(iam):
    arn = iam.create_policy(PolicyName="boundary", PolicyDocument=json.dumps(POLICY))["Policy"]["Arn"]
    iam.create_role(RoleName="r", AssumeRolePolicyDocument=TRUST, PermissionsBoundary=arn)
    iam.create_user(UserName="u")
    iam.put_user_permissions_boundary(UserName="u", PermissionsBoundary=arn)
    assert iam.get_role(RoleName="r")["Role"]["PermissionsBoundary"] == {
        "PermissionsBoundaryType": "Policy", "PermissionsBoundaryArn": arn}
    assert iam.get_user(UserName="u")["User"]["PermissionsBoundary"]["PermissionsBoundaryArn"] == arn
    assert iam.get_policy(PolicyArn=arn)["Policy"]["PermissionsBoundaryUsageCount"] == 2
    iam.delete_role_permissions_boundary(RoleName="r")
    assert "PermissionsBoundary" not in iam.get_role(RoleName="r")["Role"]
    missing = f"arn:aws:iam::{ACCOUNT}:policy/none"
    with pytest.raises(ClientError) as e:
        iam.put_role_permissions_boundary(RoleName="r", PermissionsBoundary=missing)
    assert error_of(e) == ("NoSuchEntity", f"Policy {missing} does not exist or is not attachable.", 404)


def test_oidc_providers_round_trip_and_edit_their_lists(iam):
    url = "https://oidc.eks.us-east-1.amazonaws.com/id/ABC123"
    thumb = "9e99a48a9960b14926bb7f3b02e22da2b0ab7280"
    arn = iam.create_open_id_connect_provider(Url=url, ClientIDList=["sts.amazonaws.com"], ThumbprintList=[thumb],
                                              Tags=[{"Key": "k", "Value": "v"}])["OpenIDConnectProviderArn"]
    assert arn == f"arn:aws:iam::{ACCOUNT}:oidc-provider/oidc.eks.us-east-1.amazonaws.com/id/ABC123"
    with pytest.raises(ClientError) as e:
        iam.create_open_id_connect_provider(Url=url, ThumbprintList=[thumb])
    assert error_of(e)[0] == "EntityAlreadyExists"
    iam.add_client_id_to_open_id_connect_provider(OpenIDConnectProviderArn=arn, ClientID="app")
    iam.remove_client_id_from_open_id_connect_provider(OpenIDConnectProviderArn=arn, ClientID="sts.amazonaws.com")
    got = iam.get_open_id_connect_provider(OpenIDConnectProviderArn=arn)
    assert got["Url"] == "oidc.eks.us-east-1.amazonaws.com/id/ABC123"
    assert (got["ClientIDList"], got["ThumbprintList"], got["Tags"]) == (["app"], [thumb], [{"Key": "k", "Value": "v"}])
    assert iam.list_open_id_connect_providers()["OpenIDConnectProviderList"] == [{"Arn": arn}]
    iam.delete_open_id_connect_provider(OpenIDConnectProviderArn=arn)
    with pytest.raises(ClientError) as e:
        iam.get_open_id_connect_provider(OpenIDConnectProviderArn=arn)
    assert error_of(e) == ("NoSuchEntity", f"OpenIDConnect Provider not found for arn {arn}", 404)


def test_saml_providers_round_trip(iam):
    metadata = '<EntityDescriptor xmlns="urn:oasis:names:tc:SAML:2.0:metadata" validUntil="2030-01-01T00:00:00Z" entityID="x">' + (
        "<!-- padding -->" * 70) + "</EntityDescriptor>"
    arn = iam.create_saml_provider(Name="corp", SAMLMetadataDocument=metadata)["SAMLProviderArn"]
    assert arn == f"arn:aws:iam::{ACCOUNT}:saml-provider/corp"
    got = iam.get_saml_provider(SAMLProviderArn=arn)
    assert got["SAMLMetadataDocument"] == metadata and got["ValidUntil"].year == 2030
    listed = iam.list_saml_providers()["SAMLProviderList"]
    assert [p["Arn"] for p in listed] == [arn]
    iam.delete_saml_provider(SAMLProviderArn=arn)
    assert iam.list_saml_providers()["SAMLProviderList"] == []


def test_policy_size_quotas_ignore_white_space(iam):
    iam.create_user(UserName="u")
    def doc(n):
        return json.dumps({"Version": "2012-10-17", "Statement": [
            {"Effect": "Allow", "Action": "s3:GetObject", "Resource": f"arn:aws:s3:::{'b' * n}"}]})
    with pytest.raises(ClientError) as e:
        iam.create_policy(PolicyName="big", PolicyDocument=doc(6100))
    assert error_of(e) == ("LimitExceeded", "Cannot exceed quota for PolicySize: 6144", 409)
    padded = doc(1000).replace(" ", " " * 20)
    iam.create_policy(PolicyName="padded", PolicyDocument=padded)
    iam.put_user_policy(UserName="u", PolicyName="a", PolicyDocument=doc(1000))
    with pytest.raises(ClientError) as e:
        iam.put_user_policy(UserName="u", PolicyName="b", PolicyDocument=doc(1000))
    assert error_of(e) == ("LimitExceeded", "Cannot exceed quota for UserPolicySize: 2048", 409)
    iam.put_user_policy(UserName="u", PolicyName="a", PolicyDocument=doc(1900))


def test_account_alias_is_created_listed_and_deleted(iam):
    assert iam.list_account_aliases()["AccountAliases"] == []
    iam.create_account_alias(AccountAlias="my-company")
    assert iam.list_account_aliases()["AccountAliases"] == ["my-company"]
    with pytest.raises(ClientError) as e:
        iam.delete_account_alias(AccountAlias="other")
    assert error_of(e) == ("NoSuchEntity", "The account alias other cannot be found.", 404)
    with pytest.raises(ClientError) as e:
        iam.create_account_alias(AccountAlias="Bad--Alias")
    assert error_of(e)[0] == "ValidationError"
    iam.delete_account_alias(AccountAlias="my-company")
    assert iam.list_account_aliases()["AccountAliases"] == []


def test_password_policy_reverts_omitted_members_to_defaults(iam):
    with pytest.raises(ClientError) as e:
        iam.get_account_password_policy()
    assert error_of(e) == ("NoSuchEntity", f"The Password Policy with domain name {ACCOUNT} cannot be found.", 404)
    iam.update_account_password_policy(MinimumPasswordLength=12, RequireSymbols=True, MaxPasswordAge=90)
    policy = iam.get_account_password_policy()["PasswordPolicy"]
    assert (policy["MinimumPasswordLength"], policy["RequireSymbols"], policy["MaxPasswordAge"], policy["ExpirePasswords"]) == (
        12, True, 90, True)
    iam.update_account_password_policy(RequireNumbers=True)
    policy = iam.get_account_password_policy()["PasswordPolicy"]
    assert (policy["MinimumPasswordLength"], policy["RequireSymbols"], policy["ExpirePasswords"]) == (6, False, False)
    iam.delete_account_password_policy()
    with pytest.raises(ClientError):
        iam.delete_account_password_policy()


def test_root_credentials_list_no_access_keys_of_their_own(iam):
    assert iam.list_access_keys()["AccessKeyMetadata"] == []


CERT = "-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIUZm9v\n-----END CERTIFICATE-----\n"
KEY = "-----BEGIN PRIVATE KEY-----\nMIGHAgEAMBMGByqGSM49AgEG\n-----END PRIVATE KEY-----\n"


def test_server_certificates_are_uploaded_listed_renamed_and_deleted(iam):
    meta = iam.upload_server_certificate(ServerCertificateName="web", CertificateBody=CERT, PrivateKey=KEY,
                                         Path="/cloudfront/")["ServerCertificateMetadata"]
    assert meta["Arn"] == f"arn:aws:iam::{ACCOUNT}:server-certificate/cloudfront/web"
    assert re.fullmatch(r"ASCA[A-Z2-7]{17}", meta["ServerCertificateId"])
    got = iam.get_server_certificate(ServerCertificateName="web")["ServerCertificate"]
    assert got["CertificateBody"] == CERT and "PrivateKey" not in got
    with pytest.raises(ClientError) as e:
        iam.upload_server_certificate(ServerCertificateName="web", CertificateBody=CERT, PrivateKey=KEY)
    assert error_of(e) == ("EntityAlreadyExists", "The Server Certificate with name web already exists.", 409)
    with pytest.raises(ClientError) as e:
        iam.upload_server_certificate(ServerCertificateName="bad", CertificateBody="not pem", PrivateKey=KEY)
    assert error_of(e)[0] == "MalformedCertificate"
    iam.update_server_certificate(ServerCertificateName="web", NewServerCertificateName="web2")
    listed = iam.list_server_certificates(PathPrefix="/cloudfront/")["ServerCertificateMetadataList"]
    assert [m["ServerCertificateName"] for m in listed] == ["web2"]
    iam.delete_server_certificate(ServerCertificateName="web2")
    with pytest.raises(ClientError) as e:
        iam.get_server_certificate(ServerCertificateName="web2")
    assert error_of(e) == ("NoSuchEntity", "The Server Certificate with name web2 cannot be found.", 404)


def test_account_authorization_details_show_what_hangs_off_each_entity(iam):
    arn = iam.create_policy(PolicyName="p", PolicyDocument=json.dumps(POLICY))["Policy"]["Arn"]
    iam.create_user(UserName="u")
    iam.create_group(GroupName="g")
    iam.add_user_to_group(GroupName="g", UserName="u")
    iam.attach_user_policy(UserName="u", PolicyArn=arn)
    iam.put_user_policy(UserName="u", PolicyName="inline", PolicyDocument=json.dumps(POLICY))
    iam.create_role(RoleName="r", AssumeRolePolicyDocument=TRUST)
    iam.create_instance_profile(InstanceProfileName="ip")
    iam.add_role_to_instance_profile(InstanceProfileName="ip", RoleName="r")
    details = iam.get_account_authorization_details()
    (user,) = details["UserDetailList"]
    assert user["GroupList"] == ["g"]
    assert user["AttachedManagedPolicies"] == [{"PolicyName": "p", "PolicyArn": arn}]
    assert user["UserPolicyList"] == [{"PolicyName": "inline", "PolicyDocument": POLICY}]
    (role,) = details["RoleDetailList"]
    assert [p["InstanceProfileName"] for p in role["InstanceProfileList"]] == ["ip"]
    (policy,) = details["Policies"]
    assert policy["PolicyVersionList"][0]["Document"] == POLICY and policy["AttachmentCount"] == 1
    only_roles = iam.get_account_authorization_details(Filter=["Role"])
    assert (only_roles["UserDetailList"], len(only_roles["RoleDetailList"])) == ([], 1)
    first = iam.get_account_authorization_details(MaxItems=2)
    rest = iam.get_account_authorization_details(MaxItems=2, Marker=first["Marker"])
    assert first["IsTruncated"] and not rest["IsTruncated"]
    assert len(first["UserDetailList"] + first["GroupDetailList"]) == 2
    assert len(rest["RoleDetailList"] + rest["Policies"]) == 2


def test_web_identity_federation_assumes_the_iam_role_and_echoes_the_token_claims(client):
    import base64
    iam, sts = client("iam"), client("sts")
    url = "https://oidc.eks.us-east-1.amazonaws.com/id/ABC"
    iam.create_open_id_connect_provider(Url=url, ClientIDList=["sts.amazonaws.com"],
                                        ThumbprintList=["9e99a48a9960b14926bb7f3b02e22da2b0ab7280"])
    role = iam.create_role(RoleName="irsa", AssumeRolePolicyDocument=TRUST, MaxSessionDuration=3600)["Role"]
    claims = base64.urlsafe_b64encode(json.dumps(
        {"iss": url, "sub": "system:serviceaccount:default:app", "aud": "sts.amazonaws.com"}).encode()).decode().rstrip("=")
    token = f"eyJhbGciOiJSUzI1NiJ9.{claims}.c2ln"
    out = sts.assume_role_with_web_identity(RoleArn=role["Arn"], RoleSessionName="pod", WebIdentityToken=token)
    assert out["AssumedRoleUser"]["AssumedRoleId"] == f"{role['RoleId']}:pod"
    assert out["AssumedRoleUser"]["Arn"] == f"arn:aws:sts::{ACCOUNT}:assumed-role/irsa/pod"
    assert out["SubjectFromWebIdentityToken"] == "system:serviceaccount:default:app"
    assert out["Provider"] == "oidc.eks.us-east-1.amazonaws.com/id/ABC"
    assert out["Audience"] == "sts.amazonaws.com"
    with pytest.raises(ClientError) as e:
        sts.assume_role_with_web_identity(RoleArn=role["Arn"], RoleSessionName="pod", WebIdentityToken=token,
                                          DurationSeconds=7200)
    assert error_of(e)[0] == "ValidationError"


def test_saml_federation_takes_the_session_name_from_the_assertion(server, client):
    import base64
    iam, sts = client("iam"), client("sts")
    role = iam.create_role(RoleName="sso", AssumeRolePolicyDocument=TRUST)["Role"]
    xml = ('<samlp:Response><saml:Issuer>https://idp.example.com</saml:Issuer><saml:Assertion>'
           '<saml:Subject><saml:NameID Format="urn:oasis:names:tc:SAML:2.0:nameid-format:transient">x1</saml:NameID></saml:Subject>'
           '<saml:Attribute Name="https://aws.amazon.com/SAML/Attributes/RoleSessionName">'
           '<saml:AttributeValue>alice@example.com</saml:AttributeValue></saml:Attribute></saml:Assertion></samlp:Response>')
    out = sts.assume_role_with_saml(RoleArn=role["Arn"], PrincipalArn=f"arn:aws:iam::{ACCOUNT}:saml-provider/corp",
                                    SAMLAssertion=base64.b64encode(xml.encode()).decode())
    assert out["AssumedRoleUser"]["Arn"] == f"arn:aws:sts::{ACCOUNT}:assumed-role/sso/alice@example.com"
    assert (out["Subject"], out["SubjectType"], out["Issuer"]) == ("x1", "transient", "https://idp.example.com")
    creds = out["Credentials"]
    session = boto3.client("sts", endpoint_url=server.endpoint, region_name="us-east-1",
                           aws_access_key_id=creds["AccessKeyId"], aws_secret_access_key=creds["SecretAccessKey"],
                           aws_session_token=creds["SessionToken"])
    assert session.get_caller_identity()["Arn"] == out["AssumedRoleUser"]["Arn"]


def test_get_access_key_info_names_the_keys_account(server):
    root = keyed_client(server, "iam", "111122223333")
    root.create_user(UserName="u")
    key = root.create_access_key(UserName="u")["AccessKey"]["AccessKeyId"]
    sts = keyed_client(server, "sts", "test")
    assert sts.get_access_key_info(AccessKeyId=key)["Account"] == "111122223333"


def test_virtual_mfa_devices_are_enabled_for_one_user_and_block_deletion(iam):
    iam.create_user(UserName="u")
    iam.create_user(UserName="v")
    device = iam.create_virtual_mfa_device(VirtualMFADeviceName="u-phone")["VirtualMFADevice"]
    serial = device["SerialNumber"]
    assert serial == f"arn:aws:iam::{ACCOUNT}:mfa/u-phone"
    assert len(device["Base32StringSeed"]) == 64 and device["QRCodePNG"].startswith(b"\x89PNG")
    assert iam.list_virtual_mfa_devices(AssignmentStatus="Unassigned")["VirtualMFADevices"] == [{"SerialNumber": serial}]
    iam.enable_mfa_device(UserName="u", SerialNumber=serial, AuthenticationCode1="123456", AuthenticationCode2="654321")
    with pytest.raises(ClientError) as e:
        iam.enable_mfa_device(UserName="v", SerialNumber=serial, AuthenticationCode1="123456", AuthenticationCode2="654321")
    assert error_of(e)[0] == "EntityAlreadyExists"
    (listed,) = iam.list_mfa_devices(UserName="u")["MFADevices"]
    assert listed["SerialNumber"] == serial and listed["UserName"] == "u"
    (assigned,) = iam.list_virtual_mfa_devices(AssignmentStatus="Assigned")["VirtualMFADevices"]
    assert assigned["User"]["UserName"] == "u"
    with pytest.raises(ClientError) as e:
        iam.delete_user(UserName="u")
    assert error_of(e) == ("DeleteConflict", "Cannot delete entity, must delete MFA device first.", 409)
    with pytest.raises(ClientError) as e:
        iam.delete_virtual_mfa_device(SerialNumber=serial)
    assert error_of(e)[0] == "DeleteConflict"
    iam.deactivate_mfa_device(UserName="u", SerialNumber=serial)
    iam.delete_virtual_mfa_device(SerialNumber=serial)
    with pytest.raises(ClientError) as e:
        iam.delete_virtual_mfa_device(SerialNumber=serial)
    assert error_of(e) == ("NoSuchEntity", f"VirtualMFADevice with serial number {serial} doesn't exist.", 404)
    iam.delete_user(UserName="u")


def test_iam_state_and_its_access_keys_survive_a_restart(tmp_path):
    from roto_server import RotoServer
    data = str(tmp_path / "data")
    with RotoServer("--data-dir", data) as s:
        iam = keyed_client(s, "iam", "test")
        iam.create_user(UserName="kept")
        key = iam.create_access_key(UserName="kept")["AccessKey"]
        arn = iam.create_policy(PolicyName="p", PolicyDocument=json.dumps(POLICY))["Policy"]["Arn"]
        iam.attach_user_policy(UserName="kept", PolicyArn=arn)
    with RotoServer("--data-dir", data) as s:
        iam = keyed_client(s, "iam", "test")
        assert iam.list_attached_user_policies(UserName="kept")["AttachedPolicies"] == [{"PolicyName": "p", "PolicyArn": arn}]
        identity = keyed_client(s, "sts", key["AccessKeyId"]).get_caller_identity()
        assert identity["Arn"] == f"arn:aws:iam::{ACCOUNT}:user/kept"


def test_credential_report_lists_root_and_users_with_their_credentials(iam):
    import csv
    import io
    with pytest.raises(ClientError) as e:
        iam.get_credential_report()
    assert error_of(e)[::2] == ("ReportNotPresent", 410)
    iam.create_user(UserName="u")
    iam.create_login_profile(UserName="u", Password="Pa55word!")
    iam.create_access_key(UserName="u")
    assert iam.generate_credential_report()["State"] == "STARTED"
    assert iam.generate_credential_report()["State"] == "COMPLETE"
    report = iam.get_credential_report()
    assert report["ReportFormat"] == "text/csv"
    rows = list(csv.DictReader(io.StringIO(report["Content"].decode())))
    assert [r["user"] for r in rows] == ["<root_account>", "u"]
    user = rows[1]
    assert user["arn"] == f"arn:aws:iam::{ACCOUNT}:user/u"
    assert (user["password_enabled"], user["access_key_1_active"], user["access_key_2_active"], user["mfa_active"]) == (
        "true", "true", "false", "false")
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00", user["user_creation_time"])
