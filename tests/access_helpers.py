"""Helpers shared by the --enforce-iam test files: clients signed as a key, and IAM users
with an inline policy."""

from __future__ import annotations

import json

import boto3
from botocore.config import Config

ACCOUNT = "000000000000"


def client(server, service, key="test", secret="test", token=None, **config):
    """A boto3 client of `service` signed with this key (the default account's root by
    default), without retries; `config` adds botocore Config options."""
    return boto3.client(service, endpoint_url=server.endpoint, region_name="us-east-1",
                        aws_access_key_id=key, aws_secret_access_key=secret, aws_session_token=token,
                        config=Config(retries={"max_attempts": 1}, **config))


def user(server, name, *statements, account="test"):
    """An IAM user with an inline policy of `statements` (none: no permission at all), in the
    account whose root key is `account`; returns its ARN and a function making clients
    signed as it."""
    iam = client(server, "iam", account)
    arn = iam.create_user(UserName=name)["User"]["Arn"]
    if statements:
        iam.put_user_policy(UserName=name, PolicyName="p", PolicyDocument=json.dumps(
            {"Version": "2012-10-17", "Statement": list(statements)}))
    key = iam.create_access_key(UserName=name)["AccessKey"]
    return arn, lambda service: client(server, service, key["AccessKeyId"], key["SecretAccessKey"])


def enforcing_server(*flags):
    """A module-scoped `server` fixture: a server under --enforce-iam (and `flags`)."""
    import pytest

    from roto_server import RotoServer

    @pytest.fixture(scope="module")
    def server():
        with RotoServer("--ephemeral", "--enforce-iam", *flags) as s:
            yield s

    return server


def doc(*statements):
    """A policy document of `statements`."""
    return json.dumps({"Version": "2012-10-17", "Statement": list(statements)})


def allow(action, resource="*", **extra):
    """An Allow statement (`extra`: more members, such as a Condition)."""
    return {"Effect": "Allow", "Action": action, "Resource": resource, **extra}


def session_client(server, service, creds):
    """A client signed with an STS response's `Credentials`."""
    return client(server, service, creds["AccessKeyId"], creds["SecretAccessKey"], creds["SessionToken"])
