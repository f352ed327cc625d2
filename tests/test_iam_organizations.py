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
