"""The CloudFormation registry with boto3: the AWS types Roto provisions listed and
described, private types registered with their versions, default version, configurations,
deregistration, publishers, and the registry's errors."""

from __future__ import annotations

import pytest
from botocore.exceptions import ClientError

PACKAGE = "s3://handlers/acme-widget.zip"


@pytest.fixture
def cfn(client):
    return client("cloudformation")


def code(excinfo):
    return excinfo.value.response["Error"]["Code"], excinfo.value.response["ResponseMetadata"]["HTTPStatusCode"]


def test_the_aws_types_roto_provisions_are_public(cfn):
    names = []
    kwargs = {"Visibility": "PUBLIC", "Type": "RESOURCE", "MaxResults": 100}
    while True:
        page = cfn.list_types(**kwargs)
        names += [t["TypeName"] for t in page["TypeSummaries"]]
        if "NextToken" not in page:
            break
        kwargs["NextToken"] = page["NextToken"]
    assert {"AWS::S3::Bucket", "AWS::Lambda::Function", "AWS::DynamoDB::Table"} <= set(names)
    only = cfn.list_types(Visibility="PUBLIC", Filters={"TypeNamePrefix": "AWS::SQS::"})["TypeSummaries"]
    assert {t["TypeName"] for t in only} >= {"AWS::SQS::Queue"}
    assert all(t["TypeName"].startswith("AWS::SQS::") for t in only)
    bucket = cfn.describe_type(Type="RESOURCE", TypeName="AWS::S3::Bucket")
    assert bucket["Arn"] == "arn:aws:cloudformation:us-east-1::type/resource/AWS-S3-Bucket"
    assert bucket["Visibility"] == "PUBLIC" and bucket["IsDefaultVersion"] is True
    assert cfn.describe_type(Arn=bucket["Arn"])["TypeName"] == "AWS::S3::Bucket"
    assert cfn.list_types()["TypeSummaries"] == []
    with pytest.raises(ClientError) as e:
        cfn.describe_type(Type="RESOURCE", TypeName="AWS::Nothing::Here")
    assert code(e) == ("TypeNotFoundException", 404)


def test_private_types_are_registered_with_versions(cfn):
    token = cfn.register_type(Type="RESOURCE", TypeName="Acme::Shop::Widget", SchemaHandlerPackage=PACKAGE)["RegistrationToken"]
    registration = cfn.describe_type_registration(RegistrationToken=token)
    assert registration["ProgressStatus"] == "COMPLETE"
    assert registration["TypeVersionArn"].endswith(":000000000000:type/resource/Acme-Shop-Widget/00000001")
    cfn.register_type(Type="RESOURCE", TypeName="Acme::Shop::Widget", SchemaHandlerPackage=PACKAGE)
    described = cfn.describe_type(Type="RESOURCE", TypeName="Acme::Shop::Widget")
    assert described["DefaultVersionId"] == "00000001" and described["Visibility"] == "PRIVATE"
    versions = cfn.list_type_versions(Type="RESOURCE", TypeName="Acme::Shop::Widget")["TypeVersionSummaries"]
    assert [(v["VersionId"], v["IsDefaultVersion"]) for v in versions] == [("00000001", True), ("00000002", False)]
    cfn.set_type_default_version(Type="RESOURCE", TypeName="Acme::Shop::Widget", VersionId="00000002")
    assert cfn.describe_type(Type="RESOURCE", TypeName="Acme::Shop::Widget")["DefaultVersionId"] == "00000002"
    assert [t["TypeName"] for t in cfn.list_types(Visibility="PRIVATE")["TypeSummaries"]] == ["Acme::Shop::Widget"]
    tokens = cfn.list_type_registrations(Type="RESOURCE", TypeName="Acme::Shop::Widget")["RegistrationTokenList"]
    assert token in tokens and len(tokens) == 2
    with pytest.raises(ClientError) as e:
        cfn.deregister_type(Type="RESOURCE", TypeName="Acme::Shop::Widget", VersionId="00000002")
    assert code(e) == ("CFNRegistryException", 400)
    cfn.deregister_type(Type="RESOURCE", TypeName="Acme::Shop::Widget", VersionId="00000001")
    cfn.deregister_type(Type="RESOURCE", TypeName="Acme::Shop::Widget")
    with pytest.raises(ClientError) as e:
        cfn.describe_type(Type="RESOURCE", TypeName="Acme::Shop::Widget")
    assert code(e) == ("TypeNotFoundException", 404)


def test_type_configurations_are_stored_and_described(cfn):
    cfn.register_type(Type="RESOURCE", TypeName="Acme::Shop::Widget", SchemaHandlerPackage=PACKAGE)
    arn = cfn.set_type_configuration(Type="RESOURCE", TypeName="Acme::Shop::Widget",
                                     Configuration='{"ApiKey": "k"}')["ConfigurationArn"]
    assert arn.endswith(":type-configuration/resource/Acme-Shop-Widget/default")
    out = cfn.batch_describe_type_configurations(TypeConfigurationIdentifiers=[
        {"TypeName": "Acme::Shop::Widget", "Type": "RESOURCE"},
        {"TypeConfigurationArn": arn + "x"},
    ])
    [found] = out["TypeConfigurations"]
    assert found["Configuration"] == '{"ApiKey": "k"}' and found["IsDefaultConfiguration"] is True
    assert [e["ErrorCode"] for e in out["Errors"]] == ["TypeConfigurationNotFoundException"]
    with pytest.raises(ClientError) as e:
        cfn.set_type_configuration(Type="RESOURCE", TypeName="Acme::None::Here", Configuration="{}")
    assert code(e) == ("TypeNotFoundException", 404)


def test_tests_publishing_publishers_activation_and_handler_progress(cfn):
    cfn.register_type(Type="RESOURCE", TypeName="Acme::Shop::Widget", SchemaHandlerPackage=PACKAGE)
    arn = cfn.test_type(Type="RESOURCE", TypeName="Acme::Shop::Widget")["TypeVersionArn"]
    assert arn.endswith("/00000001")
    assert cfn.describe_type(Type="RESOURCE", TypeName="Acme::Shop::Widget")["TypeTestsStatus"] == "FAILED"
    with pytest.raises(ClientError) as e:
        cfn.publish_type(Type="RESOURCE", TypeName="Acme::Shop::Widget")
    assert code(e) == ("CFNRegistryException", 400)
    with pytest.raises(ClientError) as e:
        cfn.describe_publisher()
    assert code(e) == ("CFNRegistryException", 400)
    publisher = cfn.register_publisher(AcceptTermsAndConditions=True)["PublisherId"]
    assert cfn.describe_publisher()["PublisherId"] == publisher
    assert cfn.describe_publisher(PublisherId=publisher)["PublisherStatus"] == "UNVERIFIED"
    with pytest.raises(ClientError) as e:
        cfn.publish_type(Type="RESOURCE", TypeName="Acme::Shop::Widget")
    assert "contract tests" in e.value.response["Error"]["Message"]
    with pytest.raises(ClientError) as e:
        cfn.activate_type(Type="RESOURCE", PublicTypeArn="arn:aws:cloudformation:us-east-1::type/resource/0123456789abcdef0123456789abcdef01234567/Other-Thing-Type")
    assert code(e) == ("TypeNotFoundException", 404)
    with pytest.raises(ClientError) as e:
        cfn.register_type(Type="RESOURCE", TypeName="AWS::Mine::Thing", SchemaHandlerPackage=PACKAGE)
    assert code(e) == ("CFNRegistryException", 400)
    with pytest.raises(ClientError) as e:
        cfn.record_handler_progress(BearerToken="token", OperationStatus="SUCCESS")
    assert code(e) == ("ConditionalCheckFailed", 400)
