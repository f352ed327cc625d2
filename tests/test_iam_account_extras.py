"""IAM's smaller account and user operations through boto3: ChangePassword and password
policies, GetMFADevice, ResyncMFADevice, UpdateOpenIDConnectProvider, STS token
preferences and account properties."""

from __future__ import annotations

import datetime

import boto3
import pytest
from botocore.config import Config
from botocore.exceptions import ClientError

ACCOUNT = "000000000000"


def error_of(excinfo):
    err = excinfo.value.response
    return err["Error"]["Code"], err["Error"]["Message"], err["ResponseMetadata"]["HTTPStatusCode"]


@pytest.fixture
def iam(client):
    return client("iam")


def as_user(server, iam, user):
    key = iam.create_access_key(UserName=user)["AccessKey"]
    return boto3.client("iam", endpoint_url=server.endpoint, region_name="us-east-1",
                        aws_access_key_id=key["AccessKeyId"], aws_secret_access_key=key["SecretAccessKey"],
                        config=Config(retries={"max_attempts": 1}))


# Passwords

def test_change_password_needs_the_old_password(server, iam):
    iam.create_user(UserName="dev")
    iam.create_login_profile(UserName="dev", Password="first-Pass1", PasswordResetRequired=True)
    own = as_user(server, iam, "dev")
    with pytest.raises(ClientError) as e:
        own.change_password(OldPassword="wrong-Pass1", NewPassword="second-Pass2")
    assert error_of(e)[0] == "InvalidUserType"
    own.change_password(OldPassword="first-Pass1", NewPassword="second-Pass2")
    assert iam.get_login_profile(UserName="dev")["LoginProfile"]["PasswordResetRequired"] is False
    with pytest.raises(ClientError) as e:
        own.change_password(OldPassword="first-Pass1", NewPassword="third-Pass3")
    assert error_of(e)[0] == "InvalidUserType"
    server.advance_clock(3600)
    own.change_password(OldPassword="second-Pass2", NewPassword="third-Pass3")
    iam.generate_credential_report()
    lines = iam.get_credential_report()["Content"].decode().splitlines()
    row = dict(zip(lines[0].split(","), next(r for r in lines if r.startswith("dev,")).split(",")))
    created = iam.get_login_profile(UserName="dev")["LoginProfile"]["CreateDate"]
    changed = datetime.datetime.fromisoformat(row["password_last_changed"])
    assert changed - created >= datetime.timedelta(seconds=3600)


def test_change_password_is_for_iam_users_with_a_login_profile(server, iam):
    with pytest.raises(ClientError) as e:
        iam.change_password(OldPassword="a-Password1", NewPassword="b-Password2")
    assert error_of(e)[0::2] == ("InvalidUserType", 400)
    iam.create_user(UserName="nopass")
    with pytest.raises(ClientError) as e:
        as_user(server, iam, "nopass").change_password(OldPassword="a-Password1", NewPassword="b-Password2")
    assert error_of(e) == ("NoSuchEntity", "Login Profile for User nopass cannot be found.", 404)


def test_passwords_are_checked_against_the_account_password_policy(server, iam):
    iam.create_user(UserName="dev")
    with pytest.raises(ClientError) as e:
        iam.create_login_profile(UserName="dev", Password="short")
    assert error_of(e) == ("PasswordPolicyViolation", "Password does not conform to the account password policy.", 400)
    iam.update_account_password_policy(MinimumPasswordLength=10, RequireNumbers=True, RequireSymbols=True,
                                       RequireUppercaseCharacters=True, RequireLowercaseCharacters=True)
    for weak in ("Sh0rt!", "nouppercase1!", "NOLOWERCASE1!", "NoNumbers!!!", "NoSymbols123"):
        with pytest.raises(ClientError) as e:
            iam.create_login_profile(UserName="dev", Password=weak)
        assert error_of(e)[0] == "PasswordPolicyViolation", weak
    iam.create_login_profile(UserName="dev", Password="Strong-Pass1")
    with pytest.raises(ClientError) as e:
        iam.update_login_profile(UserName="dev", Password="weak")
    assert error_of(e)[0] == "PasswordPolicyViolation"
    with pytest.raises(ClientError) as e:
        as_user(server, iam, "dev").change_password(OldPassword="Strong-Pass1", NewPassword="weakweakweak")
    assert error_of(e)[0] == "PasswordPolicyViolation"


# MFA devices

def test_get_mfa_device_names_its_user(iam):
    iam.create_user(UserName="dev")
    serial = iam.create_virtual_mfa_device(VirtualMFADeviceName="phone")["VirtualMFADevice"]["SerialNumber"]
    with pytest.raises(ClientError) as e:
        iam.get_mfa_device(SerialNumber=serial)
    assert error_of(e) == ("NoSuchEntity", f"MFA Device with serial number {serial} does not exist.", 404)
    iam.enable_mfa_device(UserName="dev", SerialNumber=serial, AuthenticationCode1="123456",
                          AuthenticationCode2="654321")
    got = iam.get_mfa_device(SerialNumber=serial, UserName="dev")
    assert (got["UserName"], got["SerialNumber"]) == ("dev", serial) and got["EnableDate"]
    assert iam.get_mfa_device(SerialNumber=serial)["UserName"] == "dev"
    iam.create_user(UserName="other")
    with pytest.raises(ClientError) as e:
        iam.get_mfa_device(SerialNumber=serial, UserName="other")
    assert error_of(e)[0] == "NoSuchEntity"
    with pytest.raises(ClientError) as e:
        iam.get_mfa_device(SerialNumber=f"arn:aws:iam::{ACCOUNT}:mfa/none")
    assert error_of(e)[0] == "NoSuchEntity"


def test_resync_mfa_device(iam):
    iam.create_user(UserName="dev")
    serial = iam.create_virtual_mfa_device(VirtualMFADeviceName="phone")["VirtualMFADevice"]["SerialNumber"]
    with pytest.raises(ClientError) as e:
        iam.resync_mfa_device(UserName="dev", SerialNumber=serial, AuthenticationCode1="111111",
                              AuthenticationCode2="222222")
    assert error_of(e)[0] == "NoSuchEntity"
    iam.enable_mfa_device(UserName="dev", SerialNumber=serial, AuthenticationCode1="123456",
                          AuthenticationCode2="654321")
    iam.resync_mfa_device(UserName="dev", SerialNumber=serial, AuthenticationCode1="111111",
                          AuthenticationCode2="222222")
    with pytest.raises(ClientError) as e:
        iam.resync_mfa_device(UserName="dev", SerialNumber=serial, AuthenticationCode1="111111",
                              AuthenticationCode2="111111")
    assert error_of(e)[0::2] == ("InvalidAuthenticationCode", 403)
    with pytest.raises(ClientError) as e:
        iam.resync_mfa_device(UserName="nobody", SerialNumber=serial, AuthenticationCode1="111111",
                              AuthenticationCode2="222222")
    assert error_of(e) == ("NoSuchEntity", "The user with name nobody cannot be found.", 404)


# OIDC providers

def test_update_openid_connect_provider_sets_and_removes_its_context(iam):
    arn = iam.create_open_id_connect_provider(Url="https://token.example.com", ClientIDList=["app"],
                                              ThumbprintList=["a" * 40])["OpenIDConnectProviderArn"]
    context = {"SubjectSourceKey": "sub", "KeyDefinitionList": [{"SourceKey": "email", "TargetKey": "mail"}]}
    iam.update_open_id_connect_provider(OpenIDConnectProviderArn=arn, ContextProvider=context,
                                        IdentityCenterInstanceArn="arn:aws:sso:::instance/ssoins-1")
    got = iam.get_open_id_connect_provider(OpenIDConnectProviderArn=arn)
    assert got["ContextProvider"] == context
    assert got["IdentityCenterInstanceArn"] == "arn:aws:sso:::instance/ssoins-1"
    iam.update_open_id_connect_provider(OpenIDConnectProviderArn=arn, RemoveContextProvider=True,
                                        RemoveIdentityCenterInstance=True)
    got = iam.get_open_id_connect_provider(OpenIDConnectProviderArn=arn)
    assert "ContextProvider" not in got and "IdentityCenterInstanceArn" not in got
    assert got["ClientIDList"] == ["app"]
    missing = f"arn:aws:iam::{ACCOUNT}:oidc-provider/nowhere.example.com"
    with pytest.raises(ClientError) as e:
        iam.update_open_id_connect_provider(OpenIDConnectProviderArn=missing, RemoveContextProvider=True)
    assert error_of(e) == ("NoSuchEntity", f"OpenIDConnect Provider not found for arn {missing}", 404)


# Account settings

def test_sts_token_preferences_show_in_the_account_summary(iam):
    assert iam.get_account_summary()["SummaryMap"]["GlobalEndpointTokenVersion"] == 1
    iam.set_security_token_service_preferences(GlobalEndpointTokenVersion="v2Token")
    assert iam.get_account_summary()["SummaryMap"]["GlobalEndpointTokenVersion"] == 2
    iam.set_security_token_service_preferences(GlobalEndpointTokenVersion="v1Token")
    assert iam.get_account_summary()["SummaryMap"]["GlobalEndpointTokenVersion"] == 1
    with pytest.raises(ClientError) as e:
        iam.set_security_token_service_preferences(GlobalEndpointTokenVersion="v3Token")
    assert error_of(e)[0] == "ValidationError"


def test_account_properties_are_merged_and_read_back(iam):
    assert iam.get_account_properties().get("Properties", {}) == {}
    iam.put_account_properties(Properties={"Team": "core", "Stage": "dev"})
    iam.put_account_properties(Properties={"Stage": "prod"})
    assert iam.get_account_properties()["Properties"] == {"Team": "core", "Stage": "prod"}


def test_account_summary_counts_mfa_devices_certificates_and_providers(iam):
    iam.create_user(UserName="dev")
    serial = iam.create_virtual_mfa_device(VirtualMFADeviceName="phone")["VirtualMFADevice"]["SerialNumber"]
    iam.create_virtual_mfa_device(VirtualMFADeviceName="spare")
    iam.enable_mfa_device(UserName="dev", SerialNumber=serial, AuthenticationCode1="123456",
                          AuthenticationCode2="654321")
    iam.create_open_id_connect_provider(Url="https://token.example.com", ThumbprintList=["a" * 40])
    summary = iam.get_account_summary()["SummaryMap"]
    assert (summary["MFADevices"], summary["MFADevicesInUse"], summary["Providers"]) == (2, 1, 1)
    assert summary["ServerCertificates"] == 0
