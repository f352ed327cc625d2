"""S3 ACLs, Object Ownership, Block Public Access and policy status, stored and answered as
S3 does in every mode: canned ACLs, grant headers and AccessControlPolicy bodies; the
BucketOwnerEnforced default that disables ACLs; Block Public Access refusing public ACLs
and public policies; GetBucketPolicyStatus computed from the policy."""

from __future__ import annotations

import json

import pytest

from s3_helpers import fails

ALL_USERS = "http://acs.amazonaws.com/groups/global/AllUsers"
AUTHENTICATED = "http://acs.amazonaws.com/groups/global/AuthenticatedUsers"


@pytest.fixture
def s3(client):
    return client("s3")


@pytest.fixture
def open_bucket(s3):
    """A bucket whose ACLs work: ObjectWriter ownership, no Block Public Access."""
    s3.create_bucket(Bucket="acl-bucket", ObjectOwnership="ObjectWriter")
    s3.delete_public_access_block(Bucket="acl-bucket")
    return "acl-bucket"


def grants(acl: dict) -> list[tuple[str, str]]:
    return sorted((g["Grantee"].get("URI") or g["Grantee"].get("ID") or g["Grantee"].get("EmailAddress"),
                   g["Permission"]) for g in acl["Grants"])


def test_canned_bucket_acl_is_stored_and_returned(s3, open_bucket):
    owner = s3.get_bucket_acl(Bucket=open_bucket)["Owner"]["ID"]
    s3.put_bucket_acl(Bucket=open_bucket, ACL="public-read-write")
    acl = s3.get_bucket_acl(Bucket=open_bucket)
    assert acl["Owner"]["ID"] == owner
    assert grants(acl) == sorted([(owner, "FULL_CONTROL"), (ALL_USERS, "READ"), (ALL_USERS, "WRITE")])
    group = [g for g in acl["Grants"] if "URI" in g["Grantee"]][0]
    assert group["Grantee"]["Type"] == "Group"
    s3.put_bucket_acl(Bucket=open_bucket, ACL="private")
    assert grants(s3.get_bucket_acl(Bucket=open_bucket)) == [(owner, "FULL_CONTROL")]


def test_grant_headers_name_ids_emails_and_groups(s3, open_bucket):
    other = "a" * 64
    s3.put_bucket_acl(Bucket=open_bucket, GrantRead=f'id="{other}", uri="{AUTHENTICATED}"',
                      GrantWriteACP='emailAddress="someone@example.com"')
    acl = s3.get_bucket_acl(Bucket=open_bucket)
    assert grants(acl) == sorted([(other, "READ"), (AUTHENTICATED, "READ"), ("someone@example.com", "WRITE_ACP")])
    types = {g["Grantee"]["Type"] for g in acl["Grants"]}
    assert types == {"CanonicalUser", "Group", "AmazonCustomerByEmail"}


def test_access_control_policy_body_round_trips(s3, open_bucket):
    owner = s3.get_bucket_acl(Bucket=open_bucket)["Owner"]
    policy = {"Owner": owner, "Grants": [
        {"Grantee": {"Type": "CanonicalUser", "ID": owner["ID"]}, "Permission": "FULL_CONTROL"},
        {"Grantee": {"Type": "Group", "URI": ALL_USERS}, "Permission": "READ_ACP"}]}
    s3.put_bucket_acl(Bucket=open_bucket, AccessControlPolicy=policy)
    assert grants(s3.get_bucket_acl(Bucket=open_bucket)) == sorted([(owner["ID"], "FULL_CONTROL"), (ALL_USERS, "READ_ACP")])


def test_canned_acl_and_grant_headers_together_are_refused(s3, open_bucket):
    fails(lambda: s3.put_bucket_acl(Bucket=open_bucket, ACL="private", GrantRead=f'uri="{ALL_USERS}"'),
          "InvalidRequest", 400, "Specifying both Canned ACLs and Header Grants is not allowed")


def test_object_acl_from_put_object_and_put_object_acl(s3, open_bucket):
    owner = s3.get_bucket_acl(Bucket=open_bucket)["Owner"]["ID"]
    s3.put_object(Bucket=open_bucket, Key="k", Body=b"x", ACL="authenticated-read")
    assert grants(s3.get_object_acl(Bucket=open_bucket, Key="k")) == sorted([(owner, "FULL_CONTROL"), (AUTHENTICATED, "READ")])
    s3.put_object_acl(Bucket=open_bucket, Key="k", ACL="public-read")
    assert grants(s3.get_object_acl(Bucket=open_bucket, Key="k")) == sorted([(owner, "FULL_CONTROL"), (ALL_USERS, "READ")])
    s3.put_object(Bucket=open_bucket, Key="k", Body=b"y")
    assert grants(s3.get_object_acl(Bucket=open_bucket, Key="k")) == [(owner, "FULL_CONTROL")]


def test_copy_takes_the_acl_of_the_request_not_the_source(s3, open_bucket):
    owner = s3.get_bucket_acl(Bucket=open_bucket)["Owner"]["ID"]
    s3.put_object(Bucket=open_bucket, Key="src", Body=b"x", ACL="public-read")
    s3.copy_object(Bucket=open_bucket, Key="dst", CopySource={"Bucket": open_bucket, "Key": "src"})
    assert grants(s3.get_object_acl(Bucket=open_bucket, Key="dst")) == [(owner, "FULL_CONTROL")]


def test_multipart_upload_keeps_the_acl_it_was_created_with(s3, open_bucket):
    upload = s3.create_multipart_upload(Bucket=open_bucket, Key="mp", ACL="public-read")["UploadId"]
    etag = s3.upload_part(Bucket=open_bucket, Key="mp", UploadId=upload, PartNumber=1, Body=b"x")["ETag"]
    s3.complete_multipart_upload(Bucket=open_bucket, Key="mp", UploadId=upload,
                                 MultipartUpload={"Parts": [{"PartNumber": 1, "ETag": etag}]})
    assert (ALL_USERS, "READ") in grants(s3.get_object_acl(Bucket=open_bucket, Key="mp"))


def test_new_buckets_enforce_bucket_ownership_and_refuse_other_acls(s3):
    s3.create_bucket(Bucket="enforced")
    rules = s3.get_bucket_ownership_controls(Bucket="enforced")["OwnershipControls"]["Rules"]
    assert rules == [{"ObjectOwnership": "BucketOwnerEnforced"}]
    fails(lambda: s3.put_object(Bucket="enforced", Key="k", Body=b"x", ACL="public-read"),
          "AccessControlListNotSupported", 400, "The bucket does not allow ACLs")
    fails(lambda: s3.put_bucket_acl(Bucket="enforced", ACL="public-read"), "AccessControlListNotSupported", 400)
    s3.put_object(Bucket="enforced", Key="k", Body=b"x", ACL="bucket-owner-full-control")
    s3.put_object(Bucket="enforced", Key="k2", Body=b"x")
    acl = s3.get_object_acl(Bucket="enforced", Key="k")
    assert grants(acl) == [(acl["Owner"]["ID"], "FULL_CONTROL")]


def test_create_bucket_with_acl_and_ownership(s3):
    fails(lambda: s3.create_bucket(Bucket="enf-acl", ACL="public-read"),
          "InvalidBucketAclWithObjectOwnership", 400,
          "Bucket cannot have ACLs set with ObjectOwnership's BucketOwnerEnforced setting")
    s3.create_bucket(Bucket="pref", ObjectOwnership="BucketOwnerPreferred", ACL="private")
    rules = s3.get_bucket_ownership_controls(Bucket="pref")["OwnershipControls"]["Rules"]
    assert rules == [{"ObjectOwnership": "BucketOwnerPreferred"}]
    fails(lambda: s3.create_bucket(Bucket="writer", ObjectOwnership="ObjectWriter", ACL="public-read"),
          "AccessDenied", 403)
    s3.create_bucket(Bucket="writer", ObjectOwnership="ObjectWriter",
                     GrantRead=f'id="{"b" * 64}"')
    assert ("b" * 64, "READ") in grants(s3.get_bucket_acl(Bucket="writer"))


def test_enforcing_ownership_is_refused_while_the_bucket_acl_grants_others(s3, open_bucket):
    s3.put_bucket_acl(Bucket=open_bucket, ACL="public-read")
    fails(lambda: s3.put_bucket_ownership_controls(
        Bucket=open_bucket, OwnershipControls={"Rules": [{"ObjectOwnership": "BucketOwnerEnforced"}]}),
        "InvalidBucketAclWithObjectOwnership", 400)
    s3.put_bucket_acl(Bucket=open_bucket, ACL="private")
    s3.put_bucket_ownership_controls(
        Bucket=open_bucket, OwnershipControls={"Rules": [{"ObjectOwnership": "BucketOwnerEnforced"}]})


def test_enforced_ownership_reads_show_the_owner_alone(s3, open_bucket):
    s3.put_bucket_acl(Bucket=open_bucket, GrantRead=f'id="{"c" * 64}"')
    s3.put_bucket_acl(Bucket=open_bucket, ACL="private")
    s3.put_object(Bucket=open_bucket, Key="k", Body=b"x", GrantRead=f'id="{"c" * 64}"')
    s3.put_bucket_ownership_controls(
        Bucket=open_bucket, OwnershipControls={"Rules": [{"ObjectOwnership": "BucketOwnerEnforced"}]})
    acl = s3.get_object_acl(Bucket=open_bucket, Key="k")
    assert grants(acl) == [(acl["Owner"]["ID"], "FULL_CONTROL")]


def test_public_access_block_refuses_public_acls(s3):
    s3.create_bucket(Bucket="blocked", ObjectOwnership="ObjectWriter")
    block = s3.get_public_access_block(Bucket="blocked")["PublicAccessBlockConfiguration"]
    assert block == {"BlockPublicAcls": True, "IgnorePublicAcls": True, "BlockPublicPolicy": True,
                     "RestrictPublicBuckets": True}
    fails(lambda: s3.put_bucket_acl(Bucket="blocked", ACL="public-read"), "AccessDenied", 403, "Access Denied")
    fails(lambda: s3.put_object(Bucket="blocked", Key="k", Body=b"x", ACL="authenticated-read"), "AccessDenied", 403)
    s3.put_object(Bucket="blocked", Key="k", Body=b"x", ACL="private")
    fails(lambda: s3.put_object_acl(Bucket="blocked", Key="k", ACL="public-read"), "AccessDenied", 403)
    s3.put_public_access_block(Bucket="blocked", PublicAccessBlockConfiguration={"BlockPublicPolicy": True})
    block = s3.get_public_access_block(Bucket="blocked")["PublicAccessBlockConfiguration"]
    assert block == {"BlockPublicAcls": False, "IgnorePublicAcls": False, "BlockPublicPolicy": True,
                     "RestrictPublicBuckets": False}
    s3.put_bucket_acl(Bucket="blocked", ACL="public-read")


def public_policy(bucket: str, condition: dict | None = None) -> str:
    statement = {"Effect": "Allow", "Principal": "*", "Action": "s3:GetObject", "Resource": f"arn:aws:s3:::{bucket}/*"}
    if condition:
        statement["Condition"] = condition
    return json.dumps({"Version": "2012-10-17", "Statement": [statement]})


def test_public_access_block_refuses_public_policies(s3):
    s3.create_bucket(Bucket="pol")
    fails(lambda: s3.put_bucket_policy(Bucket="pol", Policy=public_policy("pol")), "AccessDenied", 403)
    limited = public_policy("pol", {"StringEquals": {"aws:SourceAccount": "111122223333"}})
    s3.put_bucket_policy(Bucket="pol", Policy=limited)
    assert s3.get_bucket_policy_status(Bucket="pol")["PolicyStatus"]["IsPublic"] is False
    s3.delete_public_access_block(Bucket="pol")
    s3.put_bucket_policy(Bucket="pol", Policy=public_policy("pol"))
    assert s3.get_bucket_policy_status(Bucket="pol")["PolicyStatus"]["IsPublic"] is True
