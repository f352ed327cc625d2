"""--enforce-iam and tag condition keys: aws:RequestTag/<key> and aws:TagKeys from the tags
a call sets (in every form the models use) or the keys it removes, aws:ResourceTag/<key>
from the tags of the SQS queue, SNS topic, KMS key, secret, DynamoDB table, Lambda
function, IAM user or role, or S3 bucket (with ABAC enabled) it acts on,
s3:ExistingObjectTag/<key> from an object's tags, and aws:PrincipalTag/<key> from the
caller's user or role and its session's tags."""

from __future__ import annotations

import io
import json
import zipfile

import pytest
from botocore.exceptions import ClientError

import access_helpers
from access_helpers import client, enforcing_server
from s3_helpers import fails

server = enforcing_server()


@pytest.fixture(autouse=True)
def clean(server):
    yield
    server.reset()


def user(server, *statements):
    return access_helpers.user(server, "alice", *statements)[1]


def allow(action, condition):
    return {"Effect": "Allow", "Action": action, "Resource": "*", "Condition": condition}


def test_request_tags_decide_what_may_be_created(server):
    as_user = user(server, allow("sqs:CreateQueue", {"StringEquals": {"aws:RequestTag/team": "blue"}}),
                   allow("dynamodb:CreateTable", {"StringEquals": {"aws:RequestTag/team": "blue"}}))
    sqs = as_user("sqs")
    sqs.create_queue(QueueName="blue", tags={"team": "blue"})
    fails(lambda: sqs.create_queue(QueueName="red", tags={"team": "red"}), "AccessDeniedException", 400)
    fails(lambda: sqs.create_queue(QueueName="none"), "AccessDeniedException", 400)
    table = dict(AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
                 KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}], BillingMode="PAY_PER_REQUEST")
    as_user("dynamodb").create_table(TableName="blue", Tags=[{"Key": "team", "Value": "blue"}], **table)
    fails(lambda: as_user("dynamodb").create_table(TableName="red", Tags=[{"Key": "team", "Value": "x"}], **table),
          "AccessDeniedException", 400)


def test_kms_request_tags_read_their_tag_key_and_value_members(server):
    as_user = user(server, allow("kms:CreateKey", {"StringEquals": {"aws:RequestTag/team": "blue"}}))
    kms = as_user("kms")
    kms.create_key(Tags=[{"TagKey": "team", "TagValue": "blue"}])
    fails(lambda: kms.create_key(Tags=[{"TagKey": "team", "TagValue": "red"}]), "AccessDeniedException", 400)


def test_tag_keys_limit_which_keys_may_be_set_or_removed(server):
    url = client(server, "sqs").create_queue(QueueName="q")["QueueUrl"]
    only_team = {"ForAllValues:StringEquals": {"aws:TagKeys": ["team"]}}
    sqs = user(server, allow(["sqs:TagQueue", "sqs:UntagQueue"], only_team))("sqs")
    sqs.tag_queue(QueueUrl=url, Tags={"team": "blue"})
    fails(lambda: sqs.tag_queue(QueueUrl=url, Tags={"team": "blue", "cost": "1"}), "AccessDeniedException", 400)
    sqs.untag_queue(QueueUrl=url, TagKeys=["team"])
    fails(lambda: sqs.untag_queue(QueueUrl=url, TagKeys=["cost"]), "AccessDeniedException", 400)


def test_resource_tags_decide_access_to_queues_topics_keys_and_secrets(server):
    dev = {"StringEquals": {"aws:ResourceTag/env": "dev"}}
    as_user = user(server, allow(["sqs:SendMessage", "sns:Publish", "kms:Encrypt",
                                  "secretsmanager:GetSecretValue"], dev))
    sqs, sns, kms, sm = (client(server, s) for s in ("sqs", "sns", "kms", "secretsmanager"))
    for env in ("dev", "prod"):
        url = sqs.create_queue(QueueName=env, tags={"env": env})["QueueUrl"]
        topic = sns.create_topic(Name=env, Tags=[{"Key": "env", "Value": env}])["TopicArn"]
        key = kms.create_key(Tags=[{"TagKey": "env", "TagValue": env}])["KeyMetadata"]["KeyId"]
        sm.create_secret(Name=env, SecretString="s", Tags=[{"Key": "env", "Value": env}])
        calls = [lambda: as_user("sqs").send_message(QueueUrl=url, MessageBody="m"),
                 lambda: as_user("sns").publish(TopicArn=topic, Message="m"),
                 lambda: as_user("kms").encrypt(KeyId=key, Plaintext=b"x"),
                 lambda: as_user("secretsmanager").get_secret_value(SecretId=env)]
        for call in calls:
            if env == "dev":
                call()
            else:
                with pytest.raises(ClientError) as denied:
                    call()
                error = denied.value.response["Error"]
                assert error["Code"] in ("AccessDenied", "AccessDeniedException")
                assert "because no identity-based policy allows" in error["Message"]


def denied(call, code, status):
    error = fails(call, code, status)
    assert "because no identity-based policy allows" in error["Message"]


def test_resource_tags_decide_access_to_tables_functions_users_and_roles(server):
    dev = {"StringEquals": {"aws:ResourceTag/env": "dev"}}
    as_user = user(server, allow(["dynamodb:GetItem", "lambda:GetFunction", "iam:GetRole"], dev),
                   allow("iam:GetUser", {"StringEquals": {"iam:ResourceTag/env": "dev"}}))
    ddb, lam, iam = (client(server, s) for s in ("dynamodb", "lambda", "iam"))
    trust = json.dumps({"Version": "2012-10-17", "Statement": [
        {"Effect": "Allow", "Principal": {"Service": "lambda.amazonaws.com"}, "Action": "sts:AssumeRole"}]})
    code = io.BytesIO()
    with zipfile.ZipFile(code, "w") as z:
        z.writestr("index.py", "def handler(e, c): return e")
    for env in ("dev", "prod"):
        tag = [{"Key": "env", "Value": env}]
        ddb.create_table(TableName=env, AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
                         KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}], BillingMode="PAY_PER_REQUEST",
                         Tags=tag)
        role = iam.create_role(RoleName=env, AssumeRolePolicyDocument=trust, Tags=tag)["Role"]["Arn"]
        iam.create_user(UserName=f"u-{env}", Tags=tag)
        lam.create_function(FunctionName=env, Runtime="python3.12", Role=role, Handler="index.handler",
                            Code={"ZipFile": code.getvalue()}, Tags={"env": env})
        calls = [(lambda: as_user("dynamodb").get_item(TableName=env, Key={"pk": {"S": "x"}}),
                  "AccessDeniedException", 400),
                 (lambda: as_user("lambda").get_function(FunctionName=env), "AccessDeniedException", 403),
                 (lambda: as_user("iam").get_role(RoleName=env), "AccessDenied", 403),
                 (lambda: as_user("iam").get_user(UserName=f"u-{env}"), "AccessDenied", 403)]
        for call, code_, status in calls:
            if env == "dev":
                call()
            else:
                denied(call, code_, status)


def test_existing_object_tags_decide_reads_of_objects(server):
    s3 = client(server, "s3")
    s3.create_bucket(Bucket="docs")
    s3.put_object(Bucket="docs", Key="public", Body=b"p", Tagging="class=public")
    s3.put_object(Bucket="docs", Key="secret", Body=b"s", Tagging="class=secret")
    s3.put_object(Bucket="docs", Key="untagged", Body=b"u")
    public = {"StringEquals": {"s3:ExistingObjectTag/class": "public"}}
    reader = user(server, allow(["s3:GetObject", "s3:GetObjectTagging"], public))("s3")
    assert reader.get_object(Bucket="docs", Key="public")["Body"].read() == b"p"
    reader.get_object_tagging(Bucket="docs", Key="public")
    for key in ("secret", "untagged"):
        denied(lambda: reader.get_object(Bucket="docs", Key=key), "AccessDenied", 403)
    s3.put_object_tagging(Bucket="docs", Key="secret", Tagging={"TagSet": [{"Key": "class", "Value": "public"}]})
    assert reader.get_object(Bucket="docs", Key="secret")["Body"].read() == b"s"


def test_bucket_tags_count_once_abac_is_enabled_on_the_bucket(server):
    s3 = client(server, "s3")
    s3.create_bucket(Bucket="team-blue")
    s3.put_bucket_tagging(Bucket="team-blue", Tagging={"TagSet": [{"Key": "team", "Value": "blue"}]})
    lister = user(server, allow("s3:ListBucket", {"StringEquals": {"aws:ResourceTag/team": "blue"}}))("s3")
    denied(lambda: lister.list_objects_v2(Bucket="team-blue"), "AccessDenied", 403)
    s3.put_bucket_abac(Bucket="team-blue", AbacStatus={"Status": "Enabled"})
    assert lister.list_objects_v2(Bucket="team-blue")["KeyCount"] == 0


def test_principal_tags_of_users_match_resource_tags(server):
    iam = client(server, "iam")
    same_team = {"StringEquals": {"aws:ResourceTag/team": "${aws:PrincipalTag/team}"}}
    as_user = user(server, allow("sqs:SendMessage", same_team))
    iam.tag_user(UserName="alice", Tags=[{"Key": "team", "Value": "blue"}])
    sqs = client(server, "sqs")
    blue = sqs.create_queue(QueueName="blue", tags={"team": "blue"})["QueueUrl"]
    red = sqs.create_queue(QueueName="red", tags={"team": "red"})["QueueUrl"]
    as_user("sqs").send_message(QueueUrl=blue, MessageBody="m")
    denied(lambda: as_user("sqs").send_message(QueueUrl=red, MessageBody="m"), "AccessDeniedException", 400)
    iam.tag_user(UserName="alice", Tags=[{"Key": "team", "Value": "red"}])
    as_user("sqs").send_message(QueueUrl=red, MessageBody="m")


def test_session_tags_need_tag_session_and_override_the_roles_tags(server):
    iam = client(server, "iam")
    role_trust = {"Effect": "Allow", "Principal": {"AWS": f"arn:aws:iam::{access_helpers.ACCOUNT}:root"},
                  "Action": "sts:AssumeRole"}
    doc = lambda *s: json.dumps({"Version": "2012-10-17", "Statement": list(s)})
    role = iam.create_role(RoleName="worker", AssumeRolePolicyDocument=doc(role_trust),
                           Tags=[{"Key": "team", "Value": "blue"}])["Role"]["Arn"]
    iam.put_role_policy(RoleName="worker", PolicyName="p", PolicyDocument=doc(
        allow("sqs:SendMessage", {"StringEquals": {"aws:ResourceTag/team": "${aws:PrincipalTag/team}"}})))
    sqs = client(server, "sqs")
    blue = sqs.create_queue(QueueName="blue", tags={"team": "blue"})["QueueUrl"]
    red = sqs.create_queue(QueueName="red", tags={"team": "red"})["QueueUrl"]
    sts = client(server, "sts")

    def session(**tags):
        creds = sts.assume_role(RoleArn=role, RoleSessionName="s1", **tags)["Credentials"]
        return client(server, "sqs", creds["AccessKeyId"], creds["SecretAccessKey"], creds["SessionToken"])

    plain = session()
    plain.send_message(QueueUrl=blue, MessageBody="m")
    denied(lambda: plain.send_message(QueueUrl=red, MessageBody="m"), "AccessDeniedException", 400)
    error = fails(lambda: session(Tags=[{"Key": "team", "Value": "red"}]), "AccessDenied", 403)
    assert error["Message"] == (f"User: arn:aws:iam::{access_helpers.ACCOUNT}:root is not authorized to perform: "
                                f"sts:TagSession on resource: {role} because no resource-based policy allows "
                                "the sts:TagSession action")
    iam.update_assume_role_policy(RoleName="worker", PolicyDocument=doc(
        dict(role_trust, Action=["sts:AssumeRole", "sts:TagSession"])))
    tagged = session(Tags=[{"Key": "team", "Value": "red"}])
    tagged.send_message(QueueUrl=red, MessageBody="m")
    denied(lambda: tagged.send_message(QueueUrl=blue, MessageBody="m"), "AccessDeniedException", 400)
