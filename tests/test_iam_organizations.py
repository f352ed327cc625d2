"""IAM's Organizations, delegation-request and role-template reads on an account in no
organization, as IAM answers them."""

from __future__ import annotations

import pytest
from botocore.exceptions import ClientError


@pytest.fixture
def iam(client):
    return client("iam")


def error_of(excinfo) -> tuple[str, str]:
    err = excinfo.value.response["Error"]
    return err["Code"], err["Message"]


def test_an_account_in_no_organization_has_no_features(iam):
    with pytest.raises(ClientError) as e:
        iam.list_organizations_features()
    assert error_of(e)[0] == "OrganizationNotFoundException"


def test_unknown_jobs_requests_and_templates_are_no_such_entity(iam):
    with pytest.raises(ClientError) as e:
        iam.get_organizations_access_report(JobId="examplea-1234-b567-cde8-90fg123abcd4")
    assert error_of(e) == ("NoSuchEntity",
                           "Organizations access report job examplea-1234-b567-cde8-90fg123abcd4 does not exist.")
    with pytest.raises(ClientError) as e:
        iam.get_delegation_request(DelegationRequestId="abcdefghijklmnopqrstu")
    assert error_of(e)[0] == "NoSuchEntity"
    with pytest.raises(ClientError) as e:
        iam.get_role_template_version(TemplateArn="arn:aws:iam::aws:role-template/Example")
    assert error_of(e)[0] == "NoSuchEntity"


def test_organizations_root_management_needs_an_organization(iam):
    for call in (iam.enable_organizations_root_credentials_management, iam.disable_organizations_root_credentials_management,
                 iam.enable_organizations_root_sessions, iam.disable_organizations_root_sessions):
        with pytest.raises(ClientError) as e:
            call()
        assert error_of(e) == ("OrganizationNotFoundException",
                               "The request failed because no organization is associated with your account.")
    with pytest.raises(ClientError) as e:
        iam.generate_organizations_access_report(EntityPath="o-a1b2c3d4e5/r-f6g7h8i9j0example")
    assert error_of(e)[0] == "OrganizationNotFoundException"


def test_delegation_requests_and_templates_that_do_not_exist(iam):
    for call in (iam.accept_delegation_request, iam.associate_delegation_request, iam.send_delegation_token):
        with pytest.raises(ClientError) as e:
            call(DelegationRequestId="abcdefghijklmnopqrstu")
        assert error_of(e) == ("NoSuchEntity", "Delegation request abcdefghijklmnopqrstu does not exist.")
    for call in (iam.reject_delegation_request, iam.update_delegation_request):
        with pytest.raises(ClientError) as e:
            call(DelegationRequestId="abcdefghijklmnopqrstu", Notes="n")
        assert error_of(e)[0] == "NoSuchEntity"
    with pytest.raises(ClientError) as e:
        iam.get_human_readable_summary(EntityArn="arn:aws:iam::000000000000:delegation-request/abcdefghijklmnop")
    assert error_of(e)[0] == "NoSuchEntity"
    with pytest.raises(ClientError) as e:
        iam.acquire_role(TemplateArn="arn:aws:iam::aws:role-template/Example")
    assert error_of(e) == ("NoSuchEntity", "Role template arn:aws:iam::aws:role-template/Example does not exist.")


def test_outbound_web_identity_federation_is_off_until_enabled(iam):
    with pytest.raises(ClientError) as e:
        iam.get_outbound_web_identity_federation_info()
    assert error_of(e)[0] == "FeatureDisabled"
    issuer = iam.enable_outbound_web_identity_federation()["IssuerIdentifier"]
    assert issuer.startswith("https://") and issuer.endswith(".tokens.sts.global.api.aws")
    info = iam.get_outbound_web_identity_federation_info()
    assert (info["IssuerIdentifier"], info["JwtVendingEnabled"]) == (issuer, True)
    with pytest.raises(ClientError) as e:
        iam.enable_outbound_web_identity_federation()
    assert error_of(e)[0] == "FeatureEnabled"
    assert e.value.response["ResponseMetadata"]["HTTPStatusCode"] == 409
    iam.disable_outbound_web_identity_federation()
    with pytest.raises(ClientError) as e:
        iam.disable_outbound_web_identity_federation()
    assert error_of(e)[0] == "FeatureDisabled"
    assert e.value.response["ResponseMetadata"]["HTTPStatusCode"] == 404
