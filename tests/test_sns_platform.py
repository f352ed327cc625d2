"""SNS mobile push and SMS settings: platform applications and endpoints (stored with AWS's
rules, pushes recorded in the trace, never sent) and the account's SMS attributes."""

from __future__ import annotations

import json

import pytest
from botocore.exceptions import ClientError


@pytest.fixture
def sns(client):
    return client("sns")


def error(excinfo):
    r = excinfo.value.response
    return r["Error"]["Code"], r["Error"]["Message"], r["ResponseMetadata"]["HTTPStatusCode"]


def application(sns, name="shop"):
    return sns.create_platform_application(
        Name=name, Platform="GCM", Attributes={"PlatformCredential": "server-key"}
    )["PlatformApplicationArn"]


def test_platform_applications_are_stored_and_listed(sns):
    arn = application(sns)
    assert arn == "arn:aws:sns:us-east-1:000000000000:app/GCM/shop"
    attributes = sns.get_platform_application_attributes(PlatformApplicationArn=arn)["Attributes"]
    assert attributes == {"Enabled": "true"}, "credentials are never returned"
    sns.set_platform_application_attributes(PlatformApplicationArn=arn, Attributes={"SuccessFeedbackSampleRate": "50"})
    attributes = sns.get_platform_application_attributes(PlatformApplicationArn=arn)["Attributes"]
    assert attributes["SuccessFeedbackSampleRate"] == "50"
    assert application(sns) == arn, "creating it again returns the same application"
    listed = sns.list_platform_applications()["PlatformApplications"]
    assert [a["PlatformApplicationArn"] for a in listed] == [arn]
    sns.delete_platform_application(PlatformApplicationArn=arn)
    sns.delete_platform_application(PlatformApplicationArn=arn)
    assert sns.list_platform_applications()["PlatformApplications"] == []
    with pytest.raises(ClientError) as e:
        sns.get_platform_application_attributes(PlatformApplicationArn=arn)
    assert error(e) == ("NotFound", "PlatformApplication does not exist", 404)


def test_platform_application_validation(sns):
    with pytest.raises(ClientError) as e:
        sns.create_platform_application(Name="shop", Platform="CARRIER_PIGEON", Attributes={})
    assert error(e)[0] == "InvalidParameter"
    with pytest.raises(ClientError) as e:
        sns.create_platform_application(Name="bad name", Platform="GCM", Attributes={})
    assert error(e)[0] == "InvalidParameter"


def test_endpoints_are_one_per_token(sns):
    app = application(sns)
    arn = sns.create_platform_endpoint(PlatformApplicationArn=app, Token="device-1", CustomUserData="alice")["EndpointArn"]
    assert arn.startswith("arn:aws:sns:us-east-1:000000000000:endpoint/GCM/shop/")
    again = sns.create_platform_endpoint(PlatformApplicationArn=app, Token="device-1", CustomUserData="alice")
    assert again["EndpointArn"] == arn
    with pytest.raises(ClientError) as e:
        sns.create_platform_endpoint(PlatformApplicationArn=app, Token="device-1", CustomUserData="bob")
    code, message, status = error(e)
    assert (code, status) == ("InvalidParameter", 400)
    assert message == f"Invalid parameter: Token Reason: Endpoint {arn} already exists with the same Token, but different attributes."
    attributes = sns.get_endpoint_attributes(EndpointArn=arn)["Attributes"]
    assert attributes == {"Token": "device-1", "Enabled": "true", "CustomUserData": "alice"}
    second = sns.create_platform_endpoint(PlatformApplicationArn=app, Token="device-2")["EndpointArn"]
    listed = sns.list_endpoints_by_platform_application(PlatformApplicationArn=app)["Endpoints"]
    assert sorted(e["EndpointArn"] for e in listed) == sorted([arn, second])
    sns.delete_endpoint(EndpointArn=second)
    sns.delete_endpoint(EndpointArn=second)
    with pytest.raises(ClientError) as e:
        sns.get_endpoint_attributes(EndpointArn=second)
    assert error(e) == ("NotFound", "Endpoint does not exist", 404)
    with pytest.raises(ClientError) as e:
        sns.create_platform_endpoint(PlatformApplicationArn=app + "-gone", Token="t")
    assert error(e)[0] == "NotFound"


def test_publishing_to_an_endpoint_is_recorded_and_disabled_endpoints_refuse(server, sns):
    app = application(sns)
    arn = sns.create_platform_endpoint(PlatformApplicationArn=app, Token="device-1")["EndpointArn"]
    message = json.dumps({"default": "hello", "GCM": json.dumps({"notification": {"title": "hi"}})})
    message_id = sns.publish(TargetArn=arn, Message=message, MessageStructure="json")["MessageId"]
    delivery = server.wait_for_delivery(service="sns", operation="sns:PushNotification")
    assert delivery["target"] == arn
    detail = json.loads(delivery["detail"])
    assert detail["MessageId"] == message_id
    assert json.loads(detail["Message"]) == {"notification": {"title": "hi"}}

    sns.set_endpoint_attributes(EndpointArn=arn, Attributes={"Enabled": "false"})
    with pytest.raises(ClientError) as e:
        sns.publish(TargetArn=arn, Message="hello")
    assert error(e) == ("EndpointDisabled", "Endpoint is disabled", 400)
    sns.delete_endpoint(EndpointArn=arn)
    with pytest.raises(ClientError) as e:
        sns.publish(TargetArn=arn, Message="hello")
    assert error(e)[0] == "NotFound"


def test_sms_attributes_and_opt_outs(server, sns):
    assert sns.get_sms_attributes()["attributes"] == {}
    sns.set_sms_attributes(attributes={"DefaultSMSType": "Transactional", "DefaultSenderID": "Shop"})
    assert sns.get_sms_attributes()["attributes"] == {"DefaultSMSType": "Transactional", "DefaultSenderID": "Shop"}
    assert sns.get_sms_attributes(attributes=["DefaultSenderID"])["attributes"] == {"DefaultSenderID": "Shop"}
    with pytest.raises(ClientError) as e:
        sns.set_sms_attributes(attributes={"DefaultSMSType": "Loud"})
    assert error(e)[0] == "InvalidParameter"

    assert sns.check_if_phone_number_is_opted_out(phoneNumber="+15555550100")["isOptedOut"] is False
    with pytest.raises(ClientError) as e:
        sns.check_if_phone_number_is_opted_out(phoneNumber="call me")
    assert error(e) == ("InvalidParameter", "Invalid parameter: PhoneNumber Reason: input incorrectly formatted", 400)
    assert sns.list_phone_numbers_opted_out()["phoneNumbers"] == []
    sns.opt_in_phone_number(phoneNumber="+15555550100")
    assert sns.get_sms_sandbox_account_status()["IsInSandbox"] is False

    message_id = sns.publish(PhoneNumber="+15555550100", Message="your code is 1234")["MessageId"]
    delivery = server.wait_for_delivery(service="sns", operation="sns:SmsNotification")
    assert delivery["target"] == "+15555550100"
    assert json.loads(delivery["detail"]) == {"Message": "your code is 1234", "MessageId": message_id}
