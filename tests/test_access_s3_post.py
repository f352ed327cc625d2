"""--enforce-iam and S3 browser POST uploads: the form's signer (the key its credential
names; anonymous without one) needs s3:PutObject on the new object, decided by its policies
and the bucket's as a PUT is, and refused in S3's words."""

from __future__ import annotations

import html
import json
import re

import pytest

from access_helpers import ACCOUNT, client, enforcing_server, user
from s3_helpers import fails, fetch
from test_s3_presign import multipart_body

server = enforcing_server()


@pytest.fixture(autouse=True)
def clean(server):
    client(server, "s3").create_bucket(Bucket="uploads")
    yield
    server.reset()


def post(server, signer, key="up", bucket="uploads"):
    """Posts a form signed by `signer` (None: a form with no credentials); returns the
    status and the error code and message, if any."""
    if signer is None:
        fields, url = {"key": key}, f"{server.endpoint}/{bucket}"
    else:
        form = signer.generate_presigned_post(bucket, key)
        fields, url = form["fields"], form["url"]
    body, ctype = multipart_body(fields, "f.txt", b"posted")
    status, _, answer = fetch(url, "POST", body, {"Content-Type": ctype})
    def field(name):
        found = re.search(rf"<{name}>(.*?)</{name}>", answer.decode())
        return html.unescape(found[1]) if found else None

    return status, field("Code"), field("Message")


def stored(server, key="up"):
    return client(server, "s3").get_object(Bucket="uploads", Key=key)["Body"].read()


def test_the_forms_signer_needs_put_object(server):
    arn, as_user = user(server, "alice", {"Effect": "Allow", "Action": "s3:GetObject", "Resource": "*"})
    status, code, message = post(server, as_user("s3"))
    assert (status, code) == (403, "AccessDenied")
    assert message == (f'User: {arn} is not authorized to perform: s3:PutObject on resource: '
                       f'"arn:aws:s3:::uploads/up" because no identity-based policy allows the s3:PutObject action')
    fails(lambda: stored(server), "NoSuchKey", 404)
    _, as_writer = user(server, "bob", {"Effect": "Allow", "Action": "s3:PutObject",
                                        "Resource": "arn:aws:s3:::uploads/incoming/*"})
    assert post(server, as_writer("s3"), "incoming/a")[0] == 204
    assert stored(server, "incoming/a") == b"posted"
    assert post(server, as_writer("s3"), "elsewhere")[:2] == (403, "AccessDenied")


def test_the_roots_forms_pass_and_unknown_keys_are_refused(server):
    assert post(server, client(server, "s3"))[0] == 204
    assert post(server, client(server, "s3", "AKIAIOSFODNN7EXAMPLE", "x"))[:2] == (403, "InvalidAccessKeyId")


def test_anonymous_forms_need_a_bucket_policy_that_lets_anyone_put(server):
    assert post(server, None) == (403, "AccessDenied", "Access Denied")
    client(server, "s3").delete_public_access_block(Bucket="uploads")
    client(server, "s3").put_bucket_policy(Bucket="uploads", Policy=json.dumps({
        "Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Principal": "*", "Action": "s3:PutObject",
                                                "Resource": "arn:aws:s3:::uploads/public/*"}]}))
    assert post(server, None, "public/x")[0] == 204
    assert post(server, None, "private/x")[:2] == (403, "AccessDenied")


def test_a_bucket_policy_deny_wins_over_the_signers_permission(server):
    _, as_user = user(server, "carol", {"Effect": "Allow", "Action": "s3:PutObject", "Resource": "*"})
    client(server, "s3").put_bucket_policy(Bucket="uploads", Policy=json.dumps({
        "Version": "2012-10-17", "Statement": [{"Effect": "Deny", "Principal": {"AWS": f"arn:aws:iam::{ACCOUNT}:user/carol"},
                                                "Action": "s3:PutObject", "Resource": "arn:aws:s3:::uploads/*"}]}))
    status, code, message = post(server, as_user("s3"))
    assert (status, code) == (403, "AccessDenied")
    assert message.endswith("with an explicit deny in a resource-based policy")
