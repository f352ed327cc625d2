"""--enforce-iam and what a session carries: managed policies passed to AssumeRole as session
policies (PolicyArns, with or beside an inline Policy), transitive session tags passed on
through role chaining (TransitiveTagKeys), and the session tags of a SAML assertion's
PrincipalTag attributes (which need sts:TagSession in the trust policy), each allowing and
denying with AWS's messages."""

from __future__ import annotations

import base64

import pytest

from access_helpers import ACCOUNT, allow, client, doc, enforcing_server, session_client
from s3_helpers import fails

server = enforcing_server()


@pytest.fixture(autouse=True)
def clean(server):
    yield
    server.reset()


def role(server, name, trust, *statements):
    iam = client(server, "iam")
    arn = iam.create_role(RoleName=name, AssumeRolePolicyDocument=doc(trust))["Role"]["Arn"]
    if statements:
        iam.put_role_policy(RoleName=name, PolicyName="p", PolicyDocument=doc(*statements))
    return arn


ACCOUNT_TRUST = {"Effect": "Allow", "Principal": {"AWS": f"arn:aws:iam::{ACCOUNT}:root"},
                 "Action": ["sts:AssumeRole", "sts:TagSession"]}


@pytest.fixture
def bucket(server):
    s3 = client(server, "s3")
    s3.create_bucket(Bucket="sessions")
    s3.put_object(Bucket="sessions", Key="k", Body=b"data")
    return "sessions"


def denied(arn, action, resource, because):
    return f'User: {arn} is not authorized to perform: {action} on resource: "{resource}" because {because}'


def test_policy_arns_are_session_policies(server, bucket):
    arn = role(server, "worker", ACCOUNT_TRUST, allow("s3:*"))
    iam = client(server, "iam")
    read = iam.create_policy(PolicyName="read", PolicyDocument=doc(allow("s3:GetObject")))["Policy"]["Arn"]
    sts = client(server, "sts")
    creds = sts.assume_role(RoleArn=arn, RoleSessionName="ss", PolicyArns=[{"arn": read}])["Credentials"]
    s3 = session_client(server, "s3", creds)
    assert s3.get_object(Bucket=bucket, Key="k")["Body"].read() == b"data"
    session = f"arn:aws:sts::{ACCOUNT}:assumed-role/worker/ss"
    fails(lambda: s3.put_object(Bucket=bucket, Key="k", Body=b"x"), "AccessDenied", 403,
          denied(session, "s3:PutObject", "arn:aws:s3:::sessions/k",
                 "no session policy allows the s3:PutObject action"))
    creds = sts.assume_role(RoleArn=arn, RoleSessionName="ss", PolicyArns=[{"arn": read}],
                            Policy=doc(allow("s3:PutObject")))["Credentials"]
    both = session_client(server, "s3", creds)
    both.put_object(Bucket=bucket, Key="k", Body=b"x")
    assert both.get_object(Bucket=bucket, Key="k")["Body"].read() == b"x"
    fails(lambda: both.delete_object(Bucket=bucket, Key="k"), "AccessDenied", 403)


def test_a_session_policy_cannot_give_more_than_the_role_has(server, bucket):
    arn = role(server, "reader", ACCOUNT_TRUST, allow("s3:GetObject"))
    every = client(server, "iam").create_policy(PolicyName="every", PolicyDocument=doc(allow("s3:*")))["Policy"]["Arn"]
    creds = client(server, "sts").assume_role(RoleArn=arn, RoleSessionName="ss",
                                              PolicyArns=[{"arn": every}])["Credentials"]
    s3 = session_client(server, "s3", creds)
    assert s3.get_object(Bucket=bucket, Key="k")["Body"].read() == b"data"
    fails(lambda: s3.put_object(Bucket=bucket, Key="k", Body=b"x"), "AccessDenied", 403,
          denied(f"arn:aws:sts::{ACCOUNT}:assumed-role/reader/ss", "s3:PutObject", "arn:aws:s3:::sessions/k",
                 "no identity-based policy allows the s3:PutObject action"))


def chained(server, transitive):
    """Root assumes `first` with the tag team=blue (transitive or not); that session assumes
    `second`, whose policy reads only as team blue. Returns the second session's S3 client."""
    first = role(server, "first", ACCOUNT_TRUST, allow(["sts:AssumeRole", "sts:TagSession"]))
    second = role(server, "second", ACCOUNT_TRUST,
                  allow("s3:GetObject", Condition={"StringEquals": {"aws:PrincipalTag/team": "blue"}}))
    extra = {"TransitiveTagKeys": ["team"]} if transitive else {}
    creds = client(server, "sts").assume_role(RoleArn=first, RoleSessionName="one",
                                              Tags=[{"Key": "team", "Value": "blue"}], **extra)["Credentials"]
    creds = session_client(server, "sts", creds).assume_role(RoleArn=second, RoleSessionName="two")["Credentials"]
    return session_client(server, "s3", creds)


def test_transitive_session_tags_pass_through_role_chaining(server, bucket):
    s3 = chained(server, transitive=True)
    assert s3.get_object(Bucket=bucket, Key="k")["Body"].read() == b"data"


def test_session_tags_that_are_not_transitive_stay_with_their_session(server, bucket):
    s3 = chained(server, transitive=False)
    fails(lambda: s3.get_object(Bucket=bucket, Key="k"), "AccessDenied", 403,
          denied(f"arn:aws:sts::{ACCOUNT}:assumed-role/second/two", "s3:GetObject", "arn:aws:s3:::sessions/k",
                 "no identity-based policy allows the s3:GetObject action"))


def saml_assertion(*attributes):
    extra = "".join(
        f'<saml:Attribute Name="https://aws.amazon.com/SAML/Attributes/{name}">'
        + "".join(f"<saml:AttributeValue>{v}</saml:AttributeValue>" for v in values)
        + "</saml:Attribute>"
        for name, values in attributes)
    xml = f"""<samlp:Response><saml:Issuer>https://idp.example.com</saml:Issuer><saml:Assertion>
<saml:Subject><saml:NameID Format="urn:oasis:names:tc:SAML:2.0:nameid-format:persistent">alice</saml:NameID></saml:Subject>
<saml:Audience>https://signin.aws.amazon.com/saml</saml:Audience>
<saml:Attribute Name="https://aws.amazon.com/SAML/Attributes/RoleSessionName"><saml:AttributeValue>alice</saml:AttributeValue></saml:Attribute>
{extra}</saml:Assertion></samlp:Response>"""
    return base64.b64encode(xml.encode()).decode()


def test_saml_principal_tags_need_tag_session_and_become_principal_tags(server, bucket):
    provider = f"arn:aws:iam::{ACCOUNT}:saml-provider/corp"
    trust = {"Effect": "Allow", "Principal": {"Federated": provider}, "Action": "sts:AssumeRoleWithSAML"}
    arn = role(server, "corp", trust,
               allow("s3:GetObject", Condition={"StringEquals": {"aws:PrincipalTag/team": "blue"}}))
    sts = client(server, "sts")
    blue = saml_assertion(("PrincipalTag:team", ["blue"]))
    fails(lambda: sts.assume_role_with_saml(RoleArn=arn, PrincipalArn=provider, SAMLAssertion=blue),
          "AccessDenied", 403, "Not authorized to perform sts:TagSession")
    client(server, "iam").update_assume_role_policy(RoleName="corp", PolicyDocument=doc(
        {**trust, "Action": ["sts:AssumeRoleWithSAML", "sts:TagSession"]}))
    creds = sts.assume_role_with_saml(RoleArn=arn, PrincipalArn=provider, SAMLAssertion=blue)["Credentials"]
    assert session_client(server, "s3", creds).get_object(Bucket=bucket, Key="k")["Body"].read() == b"data"
    red = saml_assertion(("PrincipalTag:team", ["red"]))
    creds = sts.assume_role_with_saml(RoleArn=arn, PrincipalArn=provider, SAMLAssertion=red)["Credentials"]
    fails(lambda: session_client(server, "s3", creds).get_object(Bucket=bucket, Key="k"), "AccessDenied", 403,
          denied(f"arn:aws:sts::{ACCOUNT}:assumed-role/corp/alice", "s3:GetObject", "arn:aws:s3:::sessions/k",
                 "no identity-based policy allows the s3:GetObject action"))


def test_saml_transitive_tag_keys_pass_on_through_role_chaining(server, bucket):
    provider = f"arn:aws:iam::{ACCOUNT}:saml-provider/corp"
    trust = {"Effect": "Allow", "Principal": {"Federated": provider},
             "Action": ["sts:AssumeRoleWithSAML", "sts:TagSession"]}
    corp = role(server, "corp", trust, allow(["sts:AssumeRole", "sts:TagSession"]))
    second = role(server, "second", ACCOUNT_TRUST,
                  allow("s3:GetObject", Condition={"StringEquals": {"aws:PrincipalTag/team": "blue"}}))
    assertion = saml_assertion(("PrincipalTag:team", ["blue"]), ("PrincipalTag:site", ["x"]),
                               ("TransitiveTagKeys", ["team"]))
    creds = client(server, "sts").assume_role_with_saml(RoleArn=corp, PrincipalArn=provider,
                                                        SAMLAssertion=assertion)["Credentials"]
    creds = session_client(server, "sts", creds).assume_role(RoleArn=second, RoleSessionName="two")["Credentials"]
    assert session_client(server, "s3", creds).get_object(Bucket=bucket, Key="k")["Body"].read() == b"data"
