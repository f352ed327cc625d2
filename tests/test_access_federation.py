"""--enforce-iam and federated sessions: GetFederationToken's federated users (the calling
user's policies limited by the session policy, no permission without one), and the unsigned
AssumeRoleWithWebIdentity and AssumeRoleWithSAML, decided by the role's trust policy for
the identity provider it names as `Federated`, with the token's claims as condition keys
and its session tags behind sts:TagSession."""

from __future__ import annotations

import base64
import json

import pytest

from access_helpers import ACCOUNT, client, enforcing_server, user
from s3_helpers import fails

server = enforcing_server()


@pytest.fixture(autouse=True)
def clean(server):
    yield
    server.reset()


def doc(*statements):
    return json.dumps({"Version": "2012-10-17", "Statement": list(statements)})


def allow(action, resource="*"):
    return {"Effect": "Allow", "Action": action, "Resource": resource}


def session_client(server, service, creds):
    return client(server, service, creds["AccessKeyId"], creds["SecretAccessKey"], creds["SessionToken"])


def jwt(claims):
    encode = lambda part: base64.urlsafe_b64encode(json.dumps(part).encode()).decode().rstrip("=")
    return f"{encode({'alg': 'RS256'})}.{encode(claims)}.signature"


def test_a_federated_user_has_its_users_policies_within_the_session_policy(server):
    client(server, "s3").create_bucket(Bucket="fed")
    _, as_alice = user(server, "alice", allow("sts:GetFederationToken"), allow("s3:*"))
    sts = as_alice("sts")
    out = sts.get_federation_token(Name="bob", Policy=doc(allow(["s3:ListAllMyBuckets", "s3:ListBucket", "sqs:*"])))
    arn = f"arn:aws:sts::{ACCOUNT}:federated-user/bob"
    assert out["FederatedUser"]["Arn"] == arn
    bob = session_client(server, "s3", out["Credentials"])
    assert [b["Name"] for b in bob.list_buckets()["Buckets"]] == ["fed"]
    assert bob.list_objects_v2(Bucket="fed")["KeyCount"] == 0
    error = fails(lambda: bob.put_object(Bucket="fed", Key="k", Body=b"x"), "AccessDenied", 403)
    assert error["Message"] == (f'User: {arn} is not authorized to perform: s3:PutObject on resource: '
                                f'"arn:aws:s3:::fed/k" because no session policy allows the s3:PutObject action')
    # The session policy cannot grant more than alice has.
    sqs = session_client(server, "sqs", out["Credentials"])
    error = fails(lambda: sqs.list_queues(), "AccessDeniedException", 400)
    assert error["Message"].endswith("because no identity-based policy allows the sqs:ListQueues action")


def test_a_federated_user_without_a_session_policy_has_no_permissions(server):
    _, as_alice = user(server, "alice", allow("sts:GetFederationToken"), allow("s3:*"))
    creds = as_alice("sts").get_federation_token(Name="carol")["Credentials"]
    carol = session_client(server, "s3", creds)
    error = fails(lambda: carol.list_buckets(), "AccessDenied", 403)
    assert error["Message"].endswith("because no session policy allows the s3:ListAllMyBuckets action")
    assert session_client(server, "sts", creds).get_caller_identity()["Arn"].endswith(":federated-user/carol")


def test_a_bucket_policy_naming_the_federated_user_grants_it_access(server):
    s3 = client(server, "s3")
    s3.create_bucket(Bucket="shared")
    s3.put_object(Bucket="shared", Key="k", Body=b"x")
    arn = f"arn:aws:sts::{ACCOUNT}:federated-user/dave"
    s3.put_bucket_policy(Bucket="shared", Policy=doc(
        {"Effect": "Allow", "Principal": {"AWS": arn}, "Action": "s3:GetObject", "Resource": "arn:aws:s3:::shared/*"}))
    _, as_alice = user(server, "alice", allow("sts:GetFederationToken"))
    dave = session_client(server, "s3", as_alice("sts").get_federation_token(Name="dave")["Credentials"])
    assert dave.get_object(Bucket="shared", Key="k")["Body"].read() == b"x"


def test_the_roots_federated_user_takes_the_roots_permissions_within_the_session_policy(server):
    creds = client(server, "sts").get_federation_token(Name="ops", Policy=doc(allow("s3:ListAllMyBuckets")))
    ops = session_client(server, "s3", creds["Credentials"])
    ops.list_buckets()
    fails(lambda: ops.create_bucket(Bucket="no"), "AccessDenied", 403)


def oidc_role(server, condition, actions=("sts:AssumeRoleWithWebIdentity",)):
    provider = f"arn:aws:iam::{ACCOUNT}:oidc-provider/oidc.example.com"
    trust = doc({"Effect": "Allow", "Principal": {"Federated": provider}, "Action": list(actions),
                 "Condition": condition})
    iam = client(server, "iam")
    arn = iam.create_role(RoleName="web", AssumeRolePolicyDocument=trust)["Role"]["Arn"]
    iam.put_role_policy(RoleName="web", PolicyName="p", PolicyDocument=doc(
        {"Effect": "Allow", "Action": "sqs:SendMessage", "Resource": "*",
         "Condition": {"StringEquals": {"aws:ResourceTag/team": "${aws:PrincipalTag/team}"}}}))
    return arn


def test_web_identity_sign_ins_are_decided_by_the_trust_policy_for_their_provider(server):
    role = oidc_role(server, {"StringEquals": {"oidc.example.com:sub": "alice",
                                               "oidc.example.com:aud": "my-app"}})
    sts = client(server, "sts")
    token = jwt({"iss": "https://oidc.example.com", "sub": "alice", "aud": "my-app"})
    out = sts.assume_role_with_web_identity(RoleArn=role, RoleSessionName="alice", WebIdentityToken=token)
    assert out["AssumedRoleUser"]["Arn"] == f"arn:aws:sts::{ACCOUNT}:assumed-role/web/alice"
    for claims in ({"iss": "https://oidc.example.com", "sub": "bob", "aud": "my-app"},
                   {"iss": "https://other.example.com", "sub": "alice", "aud": "my-app"}):
        fails(lambda: sts.assume_role_with_web_identity(RoleArn=role, RoleSessionName="x1",
                                                        WebIdentityToken=jwt(claims)),
              "AccessDenied", 403, "Not authorized to perform sts:AssumeRoleWithWebIdentity")


def test_web_identity_session_tags_need_tag_session_and_become_principal_tags(server):
    claims = {"iss": "https://oidc.example.com", "sub": "alice", "aud": "my-app",
              "https://aws.amazon.com/tags": {"principal_tags": {"team": ["blue"]}}}
    sts = client(server, "sts")
    role = oidc_role(server, {"StringEquals": {"oidc.example.com:sub": "alice"}})
    fails(lambda: sts.assume_role_with_web_identity(RoleArn=role, RoleSessionName="alice",
                                                    WebIdentityToken=jwt(claims)),
          "AccessDenied", 403, "Not authorized to perform sts:TagSession")
    client(server, "iam").update_assume_role_policy(RoleName="web", PolicyDocument=doc(
        {"Effect": "Allow", "Principal": {"Federated": f"arn:aws:iam::{ACCOUNT}:oidc-provider/oidc.example.com"},
         "Action": ["sts:AssumeRoleWithWebIdentity", "sts:TagSession"]}))
    creds = sts.assume_role_with_web_identity(RoleArn=role, RoleSessionName="alice",
                                              WebIdentityToken=jwt(claims))["Credentials"]
    sqs = client(server, "sqs")
    blue = sqs.create_queue(QueueName="blue", tags={"team": "blue"})["QueueUrl"]
    red = sqs.create_queue(QueueName="red", tags={"team": "red"})["QueueUrl"]
    alice = session_client(server, "sqs", creds)
    alice.send_message(QueueUrl=blue, MessageBody="m")
    fails(lambda: alice.send_message(QueueUrl=red, MessageBody="m"), "AccessDeniedException", 400)


def saml_assertion(audience):
    xml = f"""<samlp:Response><saml:Issuer>https://idp.example.com</saml:Issuer><saml:Assertion>
<saml:Subject><saml:NameID Format="urn:oasis:names:tc:SAML:2.0:nameid-format:persistent">alice</saml:NameID></saml:Subject>
<saml:Audience>{audience}</saml:Audience>
<saml:Attribute Name="https://aws.amazon.com/SAML/Attributes/RoleSessionName"><saml:AttributeValue>alice</saml:AttributeValue></saml:Attribute>
</saml:Assertion></samlp:Response>"""
    return base64.b64encode(xml.encode()).decode()


def test_saml_sign_ins_are_decided_by_the_trust_policy_for_their_provider(server):
    provider = f"arn:aws:iam::{ACCOUNT}:saml-provider/corp"
    trust = doc({"Effect": "Allow", "Principal": {"Federated": provider}, "Action": "sts:AssumeRoleWithSAML",
                 "Condition": {"StringEquals": {"saml:aud": "https://signin.aws.amazon.com/saml"}}})
    role = client(server, "iam").create_role(RoleName="corp", AssumeRolePolicyDocument=trust)["Role"]["Arn"]
    sts = client(server, "sts")
    out = sts.assume_role_with_saml(RoleArn=role, PrincipalArn=provider,
                                    SAMLAssertion=saml_assertion("https://signin.aws.amazon.com/saml"))
    assert out["AssumedRoleUser"]["Arn"] == f"arn:aws:sts::{ACCOUNT}:assumed-role/corp/alice"
    for principal, audience in ((provider, "https://elsewhere.example.com"),
                                (f"arn:aws:iam::{ACCOUNT}:saml-provider/other", "https://signin.aws.amazon.com/saml")):
        fails(lambda: sts.assume_role_with_saml(RoleArn=role, PrincipalArn=principal,
                                                SAMLAssertion=saml_assertion(audience)),
              "AccessDenied", 403, "Not authorized to perform sts:AssumeRoleWithSAML")
