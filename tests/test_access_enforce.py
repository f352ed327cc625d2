"""--enforce-iam: who calls (root by `test` or a 12-digit key, IAM users by their keys, role
sessions from STS, anonymous callers), and AWS's decision over identity policies (users,
groups, roles), permissions boundaries, session policies, resource policies (bucket policies
and ACLs with Block Public Access, trust policies), cross-account rules, explicit denies and
condition keys; denials in each protocol's shape, with AWS's message, and in the trace."""

from __future__ import annotations

import http.client
import json
import urllib.parse

import boto3
import pytest
from botocore import UNSIGNED
from botocore.config import Config
from botocore.exceptions import ClientError

from access_helpers import client
from roto_server import RotoServer
from s3_helpers import fails

ACCOUNT = "000000000000"


@pytest.fixture(scope="module")
def server():
    with RotoServer("--ephemeral", "--enforce-iam") as s:
        yield s


@pytest.fixture(autouse=True)
def clean(server):
    yield
    server.reset()


def policy(*statements) -> str:
    return json.dumps({"Version": "2012-10-17", "Statement": list(statements)})


def allow(action, resource="*", **extra):
    return {"Effect": "Allow", "Action": action, "Resource": resource, **extra}


def deny(action, resource="*", **extra):
    return {"Effect": "Deny", "Action": action, "Resource": resource, **extra}


def user(server, name, *statements, boundary=None):
    """An IAM user with an inline policy of `statements`; returns (arn, key, secret)."""
    iam = client(server, "iam")
    arn = iam.create_user(UserName=name)["User"]["Arn"]
    if statements:
        iam.put_user_policy(UserName=name, PolicyName="p", PolicyDocument=policy(*statements))
    if boundary:
        arn_b = iam.create_policy(PolicyName=f"{name}-boundary", PolicyDocument=policy(*boundary))["Policy"]["Arn"]
        iam.put_user_permissions_boundary(UserName=name, PermissionsBoundary=arn_b)
    key = iam.create_access_key(UserName=name)["AccessKey"]
    return arn, key["AccessKeyId"], key["SecretAccessKey"]


@pytest.fixture
def bucket(server):
    s3 = client(server, "s3")
    s3.create_bucket(Bucket="bkt")
    s3.put_object(Bucket="bkt", Key="k", Body=b"data")
    return "bkt"


def test_root_does_everything_in_its_account(server, bucket):
    s3 = client(server, "s3")
    assert s3.get_object(Bucket=bucket, Key="k")["Body"].read() == b"data"
    client(server, "dynamodb").list_tables()
    assert client(server, "sts").get_caller_identity()["Arn"] == f"arn:aws:iam::{ACCOUNT}:root"


def test_user_without_policies_is_denied_in_each_protocols_shape(server, bucket):
    arn, key, secret = user(server, "alice")
    s3 = client(server, "s3", key, secret)
    e = fails(lambda: s3.get_object(Bucket=bucket, Key="k"), "AccessDenied", 403)
    assert e["Message"] == (f'User: {arn} is not authorized to perform: s3:GetObject on resource: '
                            f'"arn:aws:s3:::bkt/k" because no identity-based policy allows the s3:GetObject action')
    fails(lambda: s3.head_object(Bucket=bucket, Key="k"), "403", 403)
    ddb = client(server, "dynamodb", key, secret)
    e = fails(lambda: ddb.get_item(TableName="t", Key={"k": {"S": "1"}}), "AccessDeniedException", 400)
    assert e["Message"] == (f"User: {arn} is not authorized to perform: dynamodb:GetItem on resource: "
                            f"arn:aws:dynamodb:us-east-1:{ACCOUNT}:table/t because no identity-based policy "
                            f"allows the dynamodb:GetItem action")
    iam = client(server, "iam", key, secret)
    e = fails(lambda: iam.list_users(), "AccessDenied", 403)
    assert "iam:ListUsers" in e["Message"]
    lam = client(server, "lambda", key, secret)
    fails(lambda: lam.list_functions(), "AccessDeniedException", 403)
    # GetCallerIdentity needs no permission.
    assert client(server, "sts", key, secret).get_caller_identity()["Arn"] == arn


def test_identity_policies_allow_and_explicit_denies_win(server, bucket):
    arn, key, secret = user(server, "bob", allow("s3:GetObject", "arn:aws:s3:::bkt/*"),
                            allow("s3:ListBucket", "arn:aws:s3:::bkt"),
                            deny("s3:GetObject", "arn:aws:s3:::bkt/secret*"))
    s3 = client(server, "s3", key, secret)
    assert s3.get_object(Bucket=bucket, Key="k")["Body"].read() == b"data"
    assert [o["Key"] for o in s3.list_objects_v2(Bucket=bucket)["Contents"]] == ["k"]
    client(server, "s3").put_object(Bucket=bucket, Key="secret.txt", Body=b"x")
    e = fails(lambda: s3.get_object(Bucket=bucket, Key="secret.txt"), "AccessDenied", 403)
    assert e["Message"].endswith("with an explicit deny in an identity-based policy")
    fails(lambda: s3.put_object(Bucket=bucket, Key="new", Body=b"x"), "AccessDenied", 403)


def test_group_policies_apply_to_members(server, bucket):
    arn, key, secret = user(server, "carol")
    iam = client(server, "iam")
    iam.create_group(GroupName="readers")
    iam.put_group_policy(GroupName="readers", PolicyName="read", PolicyDocument=policy(allow("s3:GetObject")))
    s3 = client(server, "s3", key, secret)
    fails(lambda: s3.get_object(Bucket=bucket, Key="k"), "AccessDenied", 403)
    iam.add_user_to_group(GroupName="readers", UserName="carol")
    assert s3.get_object(Bucket=bucket, Key="k")["Body"].read() == b"data"


def test_permissions_boundary_limits_what_policies_allow(server, bucket):
    arn, key, secret = user(server, "dave", allow("s3:*"), boundary=[allow("s3:ListBucket")])
    s3 = client(server, "s3", key, secret)
    s3.list_objects_v2(Bucket=bucket)
    e = fails(lambda: s3.get_object(Bucket=bucket, Key="k"), "AccessDenied", 403)
    assert e["Message"].endswith("because no permissions boundary allows the s3:GetObject action")


def test_policy_variables_and_condition_keys(server, bucket):
    arn, key, secret = user(server, "erin", allow("s3:PutObject", "arn:aws:s3:::bkt/home/${aws:username}/*"),
                            allow("s3:GetObject", "*", Condition={"IpAddress": {"aws:SourceIp": "10.0.0.0/8"}}))
    s3 = client(server, "s3", key, secret)
    s3.put_object(Bucket=bucket, Key="home/erin/f", Body=b"x")
    fails(lambda: s3.put_object(Bucket=bucket, Key="home/frank/f", Body=b"x"), "AccessDenied", 403)
    fails(lambda: s3.get_object(Bucket=bucket, Key="k"), "AccessDenied", 403)
    iam = client(server, "iam")
    iam.put_user_policy(UserName="erin", PolicyName="p2", PolicyDocument=policy(
        allow("s3:GetObject", "*", Condition={"IpAddress": {"aws:SourceIp": "127.0.0.0/8"}})))
    s3.get_object(Bucket=bucket, Key="k")


def test_anonymous_callers_need_a_public_policy_or_acl(server, bucket):
    anon = boto3.client("s3", endpoint_url=server.endpoint, region_name="us-east-1",
                        config=Config(signature_version=UNSIGNED, retries={"max_attempts": 1}))
    e = fails(lambda: anon.get_object(Bucket=bucket, Key="k"), "AccessDenied", 403, "Access Denied")
    s3 = client(server, "s3")
    s3.delete_public_access_block(Bucket=bucket)
    s3.put_bucket_policy(Bucket=bucket, Policy=policy(
        {"Effect": "Allow", "Principal": "*", "Action": "s3:GetObject", "Resource": "arn:aws:s3:::bkt/*"}))
    assert anon.get_object(Bucket=bucket, Key="k")["Body"].read() == b"data"
    fails(lambda: anon.list_objects_v2(Bucket=bucket), "AccessDenied", 403)
    # RestrictPublicBuckets makes the public policy count for the owner's account alone.
    s3.put_public_access_block(Bucket=bucket, PublicAccessBlockConfiguration={"RestrictPublicBuckets": True})
    fails(lambda: anon.get_object(Bucket=bucket, Key="k"), "AccessDenied", 403)


def test_public_acls_count_unless_ownership_or_block_public_access_say_otherwise(server):
    s3 = client(server, "s3")
    s3.create_bucket(Bucket="acl", ObjectOwnership="ObjectWriter")
    s3.delete_public_access_block(Bucket="acl")
    s3.put_object(Bucket="acl", Key="k", Body=b"x", ACL="public-read")
    s3.put_bucket_acl(Bucket="acl", ACL="public-read")
    anon = boto3.client("s3", endpoint_url=server.endpoint, region_name="us-east-1",
                        config=Config(signature_version=UNSIGNED, retries={"max_attempts": 1}))
    assert anon.get_object(Bucket="acl", Key="k")["Body"].read() == b"x"
    assert [o["Key"] for o in anon.list_objects_v2(Bucket="acl")["Contents"]] == ["k"]
    s3.put_public_access_block(Bucket="acl", PublicAccessBlockConfiguration={"IgnorePublicAcls": True})
    fails(lambda: anon.get_object(Bucket="acl", Key="k"), "AccessDenied", 403)
    s3.delete_public_access_block(Bucket="acl")
    s3.put_bucket_acl(Bucket="acl", ACL="private")
    s3.put_bucket_ownership_controls(Bucket="acl", OwnershipControls={"Rules": [{"ObjectOwnership": "BucketOwnerEnforced"}]})
    fails(lambda: anon.get_object(Bucket="acl", Key="k"), "AccessDenied", 403)


def test_other_accounts_need_the_resource_policy(server, bucket):
    other = client(server, "s3", "111111111111", "test")
    e = fails(lambda: other.get_object(Bucket=bucket, Key="k"), "AccessDenied", 403)
    assert e["Message"].startswith("User: arn:aws:iam::111111111111:root is not authorized")
    assert e["Message"].endswith("because no resource-based policy allows the s3:GetObject action")
    client(server, "s3").put_bucket_policy(Bucket=bucket, Policy=policy(
        {"Effect": "Allow", "Principal": {"AWS": "111111111111"}, "Action": "s3:GetObject", "Resource": "arn:aws:s3:::bkt/*"}))
    assert other.get_object(Bucket=bucket, Key="k")["Body"].read() == b"data"
    # The other account's users still need their own identity policies.
    iam = client(server, "iam", "111111111111", "test")
    iam.create_user(UserName="visitor")
    key = iam.create_access_key(UserName="visitor")["AccessKey"]
    visitor = client(server, "s3", key["AccessKeyId"], key["SecretAccessKey"])
    fails(lambda: visitor.get_object(Bucket=bucket, Key="k"), "AccessDenied", 403)
    iam.put_user_policy(UserName="visitor", PolicyName="p", PolicyDocument=policy(allow("s3:GetObject")))
    assert visitor.get_object(Bucket=bucket, Key="k")["Body"].read() == b"data"


def test_bucket_policy_denies_win_over_the_owner(server, bucket):
    s3 = client(server, "s3")
    s3.put_bucket_policy(Bucket=bucket, Policy=policy(
        {"Effect": "Deny", "Principal": "*", "Action": "s3:DeleteObject", "Resource": "arn:aws:s3:::bkt/*"}))
    e = fails(lambda: s3.delete_object(Bucket=bucket, Key="k"), "AccessDenied", 403)
    assert e["Message"].endswith("with an explicit deny in a resource-based policy")


def test_same_account_bucket_policy_naming_the_user_needs_no_identity_policy(server, bucket):
    arn, key, secret = user(server, "gina")
    client(server, "s3").put_bucket_policy(Bucket=bucket, Policy=policy(
        {"Effect": "Allow", "Principal": {"AWS": arn}, "Action": "s3:GetObject", "Resource": "arn:aws:s3:::bkt/*"}))
    assert client(server, "s3", key, secret).get_object(Bucket=bucket, Key="k")["Body"].read() == b"data"


def test_role_sessions_take_the_role_policies_and_the_session_policy(server, bucket):
    arn, key, secret = user(server, "hank", allow("sts:AssumeRole"))
    iam = client(server, "iam")
    trust = policy({"Effect": "Allow", "Principal": {"AWS": arn}, "Action": "sts:AssumeRole"})
    role = iam.create_role(RoleName="reader", AssumeRolePolicyDocument=trust)["Role"]["Arn"]
    iam.put_role_policy(RoleName="reader", PolicyName="p", PolicyDocument=policy(allow("s3:GetObject"), allow("s3:PutObject")))
    sts = client(server, "sts", key, secret)
    creds = sts.assume_role(RoleArn=role, RoleSessionName="s1")["Credentials"]
    session = client(server, "s3", creds["AccessKeyId"], creds["SecretAccessKey"], creds["SessionToken"])
    assert session.get_object(Bucket=bucket, Key="k")["Body"].read() == b"data"
    session.put_object(Bucket=bucket, Key="w", Body=b"x")
    e = fails(lambda: session.delete_object(Bucket=bucket, Key="k"), "AccessDenied", 403)
    assert e["Message"].startswith(f"User: arn:aws:sts::{ACCOUNT}:assumed-role/reader/s1 is not authorized")
    limited = sts.assume_role(RoleArn=role, RoleSessionName="l1", Policy=policy(allow("s3:GetObject")))["Credentials"]
    narrow = client(server, "s3", limited["AccessKeyId"], limited["SecretAccessKey"], limited["SessionToken"])
    narrow.get_object(Bucket=bucket, Key="k")
    e = fails(lambda: narrow.put_object(Bucket=bucket, Key="w", Body=b"x"), "AccessDenied", 403)
    assert e["Message"].endswith("because no session policy allows the s3:PutObject action")


def test_assume_role_needs_the_trust_policy(server):
    arn, key, secret = user(server, "ivan", allow("sts:AssumeRole"))
    iam = client(server, "iam")
    trust = policy({"Effect": "Allow", "Principal": {"Service": "lambda.amazonaws.com"}, "Action": "sts:AssumeRole"})
    role = iam.create_role(RoleName="fn", AssumeRolePolicyDocument=trust)["Role"]["Arn"]
    sts = client(server, "sts", key, secret)
    e = fails(lambda: sts.assume_role(RoleArn=role, RoleSessionName="s1"), "AccessDenied", 403)
    assert e["Message"] == (f"User: {arn} is not authorized to perform: sts:AssumeRole on resource: {role} "
                            f"because no resource-based policy allows the sts:AssumeRole action")
    # A trust policy naming the account delegates to the caller's identity policies.
    iam.update_assume_role_policy(RoleName="fn", PolicyDocument=policy(
        {"Effect": "Allow", "Principal": {"AWS": f"arn:aws:iam::{ACCOUNT}:root"}, "Action": "sts:AssumeRole"}))
    sts.assume_role(RoleArn=role, RoleSessionName="s1")
    _, key2, secret2 = user(server, "judy")
    fails(lambda: client(server, "sts", key2, secret2).assume_role(RoleArn=role, RoleSessionName="s1"),
          "AccessDenied", 403)


def test_unknown_keys_are_refused_in_each_protocols_words(server, bucket):
    s3 = client(server, "s3", "AKIAIOSFODNN7EXAMPLE", "x")
    e = fails(lambda: s3.get_object(Bucket=bucket, Key="k"), "InvalidAccessKeyId", 403,
              "The AWS Access Key Id you provided does not exist in our records.")
    ddb = client(server, "dynamodb", "AKIAIOSFODNN7EXAMPLE", "x")
    fails(lambda: ddb.list_tables(), "UnrecognizedClientException", 400,
          "The security token included in the request is invalid.")
    iam = client(server, "iam", "AKIAIOSFODNN7EXAMPLE", "x")
    fails(lambda: iam.list_users(), "InvalidClientTokenId", 403)


def test_a_deleted_access_key_stops_working(server, bucket):
    arn, key, secret = user(server, "kim", allow("s3:*"))
    s3 = client(server, "s3", key, secret)
    s3.get_object(Bucket=bucket, Key="k")
    client(server, "iam").delete_access_key(UserName="kim", AccessKeyId=key)
    fails(lambda: s3.get_object(Bucket=bucket, Key="k"), "InvalidAccessKeyId", 403)


def test_policy_changes_take_effect_at_once(server, bucket):
    arn, key, secret = user(server, "liam")
    s3 = client(server, "s3", key, secret)
    fails(lambda: s3.get_object(Bucket=bucket, Key="k"), "AccessDenied", 403)
    iam = client(server, "iam")
    iam.put_user_policy(UserName="liam", PolicyName="p", PolicyDocument=policy(allow("s3:GetObject")))
    s3.get_object(Bucket=bucket, Key="k")
    iam.delete_user_policy(UserName="liam", PolicyName="p")
    fails(lambda: s3.get_object(Bucket=bucket, Key="k"), "AccessDenied", 403)


def test_every_decision_is_in_the_trace(server, bucket):
    arn, key, secret = user(server, "mia")
    fails(lambda: client(server, "s3", key, secret).get_object(Bucket=bucket, Key="k"), "AccessDenied", 403)
    entry = server.traces(service="s3", operation="GetObject")[-1]
    assert entry["error_code"] == "AccessDenied"
    assert entry["detail"].startswith(f"access denied because no identity-based policy allows the s3:GetObject action: {arn}")
    client(server, "s3").get_object(Bucket=bucket, Key="k")
    entry = server.traces(service="s3", operation="GetObject")[-1]
    assert entry["detail"].startswith("access allowed:")


def test_unsigned_raw_request_is_anonymous(server, bucket):
    host, port = server.endpoint.split("//")[1].split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=10)
    conn.request("PUT", "/bkt/raw", body=b"x")
    resp = conn.getresponse()
    body = resp.read()
    assert resp.status == 403
    assert b"<Code>AccessDenied</Code>" in body
    assert b"<Message>Access Denied</Message>" in body


def test_queue_policy_lets_another_account_send(server):
    sqs = client(server, "sqs")
    url = sqs.create_queue(QueueName="q")["QueueUrl"]
    arn = f"arn:aws:sqs:us-east-1:{ACCOUNT}:q"
    other = client(server, "sqs", "111111111111", "test")
    e = fails(lambda: other.send_message(QueueUrl=url, MessageBody="hi"), "AccessDeniedException", 400)
    assert e["Message"] == ("User: arn:aws:iam::111111111111:root is not authorized to perform: sqs:SendMessage "
                            f"on resource: {arn} because no resource-based policy allows the sqs:SendMessage action")
    sqs.set_queue_attributes(QueueUrl=url, Attributes={"Policy": policy(
        {"Effect": "Allow", "Principal": {"AWS": "111111111111"}, "Action": "sqs:SendMessage", "Resource": arn})})
    other.send_message(QueueUrl=url, MessageBody="hi")
    fails(lambda: other.receive_message(QueueUrl=url), "AccessDeniedException", 400)


def test_topic_policy_lets_another_account_publish(server):
    sns = client(server, "sns")
    arn = sns.create_topic(Name="t")["TopicArn"]
    other = client(server, "sns", "111111111111", "test")
    e = fails(lambda: other.publish(TopicArn=arn, Message="hi"), "AccessDenied", 403)
    assert "sns:Publish" in e["Message"]
    sns.set_topic_attributes(TopicArn=arn, AttributeName="Policy", AttributeValue=policy(
        {"Effect": "Allow", "Principal": {"AWS": "arn:aws:iam::111111111111:root"}, "Action": "sns:Publish", "Resource": arn}))
    other.publish(TopicArn=arn, Message="hi")


def test_key_policy_decides_for_another_account(server):
    kms = client(server, "kms")
    key = kms.create_key()["KeyMetadata"]
    other = client(server, "kms", "111111111111", "test")
    e = fails(lambda: other.describe_key(KeyId=key["Arn"]), "AccessDeniedException", 400)
    assert f"on resource: {key['Arn']}" in e["Message"]


def test_secret_resource_policy_denies(server):
    sm = client(server, "secretsmanager")
    arn = sm.create_secret(Name="s", SecretString="v")["ARN"]
    _, key, secret = user(server, "nina", allow("secretsmanager:GetSecretValue"))
    reader = client(server, "secretsmanager", key, secret)
    assert reader.get_secret_value(SecretId="s")["SecretString"] == "v"
    sm.put_resource_policy(SecretId="s", ResourcePolicy=policy(
        {"Effect": "Deny", "Principal": "*", "Action": "secretsmanager:GetSecretValue", "Resource": "*"}))
    e = fails(lambda: reader.get_secret_value(SecretId="s"), "AccessDeniedException", 400)
    assert e["Message"].endswith("with an explicit deny in a resource-based policy")
    assert f"on resource: {arn}" in e["Message"]


def test_function_policy_lets_another_account_read_the_function(server):
    lam = client(server, "lambda")
    _, key, secret = user(server, "olga", allow("lambda:GetPolicy"))
    e = fails(lambda: client(server, "lambda", key, secret).get_function(FunctionName="f"), "AccessDeniedException", 403)
    assert e["Message"].startswith("User: arn:aws:iam::000000000000:user/olga is not authorized to perform: "
                                   "lambda:GetFunction on resource: arn:aws:lambda:us-east-1:000000000000:function:f")
    assert lam.list_functions()["Functions"] == []


def test_key_policy_naming_the_root_delegates_to_iam(server):
    kms = client(server, "kms")
    key = kms.create_key()["KeyMetadata"]["KeyId"]
    _, key_id, secret = user(server, "pete")
    user_kms = client(server, "kms", key_id, secret)
    fails(lambda: user_kms.encrypt(KeyId=key, Plaintext=b"x"), "AccessDeniedException", 400)
    client(server, "iam").put_user_policy(UserName="pete", PolicyName="p", PolicyDocument=policy(allow("kms:Encrypt")))
    user_kms.encrypt(KeyId=key, Plaintext=b"x")
