"""--enforce-iam and tag condition keys: aws:RequestTag/<key> and aws:TagKeys from the tags
a call sets (in every form the models use) or the keys it removes, aws:ResourceTag/<key>
from the tags of the SQS queue, SNS topic, KMS key or secret it acts on."""

from __future__ import annotations

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
