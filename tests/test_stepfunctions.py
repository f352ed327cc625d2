"""Step Functions' control plane through boto3: state machines, versions, aliases,
activities, tags, definition checks, and AWS's errors for each."""

from __future__ import annotations

import json

import pytest
from botocore.exceptions import ClientError

ROLE = "arn:aws:iam::000000000000:role/sfn"
PASS = json.dumps({"StartAt": "A", "States": {"A": {"Type": "Pass", "End": True}}})
ARN = "arn:aws:states:us-east-1:000000000000"


def error(excinfo):
    return excinfo.value.response["Error"]["Code"], excinfo.value.response["Error"]["Message"]


@pytest.fixture
def sfn(client):
    return client("stepfunctions")


def test_create_describe_list_and_delete_a_state_machine(sfn):
    out = sfn.create_state_machine(name="m", definition=PASS, roleArn=ROLE)
    assert out["stateMachineArn"] == f"{ARN}:stateMachine:m"
    d = sfn.describe_state_machine(stateMachineArn=out["stateMachineArn"])
    assert d["name"] == "m" and d["status"] == "ACTIVE" and d["type"] == "STANDARD"
    assert d["definition"] == PASS and d["roleArn"] == ROLE
    assert d["loggingConfiguration"] == {"level": "OFF", "includeExecutionData": False}
    assert d["tracingConfiguration"] == {"enabled": False}
    assert d["creationDate"] == out["creationDate"]
    sfn.create_state_machine(name="e", definition=PASS, roleArn=ROLE, type="EXPRESS")
    listed = sfn.list_state_machines()["stateMachines"]
    assert [(m["name"], m["type"]) for m in listed] == [("m", "STANDARD"), ("e", "EXPRESS")]
    sfn.delete_state_machine(stateMachineArn=out["stateMachineArn"])
    with pytest.raises(ClientError) as e:
        sfn.describe_state_machine(stateMachineArn=out["stateMachineArn"])
    assert error(e) == ("StateMachineDoesNotExist", f"State Machine Does Not Exist: '{ARN}:stateMachine:m'")


def test_create_is_idempotent_for_the_same_definition_and_refuses_a_different_one(sfn):
    first = sfn.create_state_machine(name="m", definition=PASS, roleArn=ROLE)
    again = sfn.create_state_machine(name="m", definition=PASS, roleArn=ROLE)
    assert again["stateMachineArn"] == first["stateMachineArn"]
    other = json.dumps({"StartAt": "B", "States": {"B": {"Type": "Succeed"}}})
    with pytest.raises(ClientError) as e:
        sfn.create_state_machine(name="m", definition=other, roleArn=ROLE)
    assert error(e) == ("StateMachineAlreadyExists", f"State Machine Already Exists: '{ARN}:stateMachine:m'")


@pytest.mark.parametrize("definition, message", [
    ('{"StartAt": "A", "States": {"A": {"Type": "Pass", "Next": "B"}}}',
     "Invalid State Machine Definition: 'MISSING_TRANSITION_TARGET: Missing 'Next' target: B at /States/A/Next, "
     "MISSING_END_STATE: Workflow has no terminal state at /States'"),
    ('{"States": {"A": {"Type": "Pass", "End": true}}}',
     "Invalid State Machine Definition: 'SCHEMA_VALIDATION_FAILED: These fields are required: [StartAt] at /'"),
    ('{"StartAt": "A", "States": {"A": {"Type": "Nope", "End": true}}}',
     "Invalid State Machine Definition: 'SCHEMA_VALIDATION_FAILED: The field \"Type\" should have one of these "
     "values: [Task, Pass, Choice, Wait, Succeed, Fail, Parallel, Map] at /States/A/Type'"),
])
def test_invalid_definitions_are_refused_with_their_diagnostics(sfn, definition, message):
    with pytest.raises(ClientError) as e:
        sfn.create_state_machine(name="bad", definition=definition, roleArn=ROLE)
    assert error(e) == ("InvalidDefinition", message)


def test_invalid_json_and_unreachable_states(sfn):
    with pytest.raises(ClientError) as e:
        sfn.create_state_machine(name="bad", definition="{nope", roleArn=ROLE)
    assert error(e)[1].startswith("Invalid State Machine Definition: 'INVALID_JSON_DESCRIPTION: ")
    out = sfn.validate_state_machine_definition(definition=json.dumps(
        {"StartAt": "A", "States": {"A": {"Type": "Succeed"}, "B": {"Type": "Succeed"}}}))
    assert out["result"] == "FAIL" and out["truncated"] is False
    assert out["diagnostics"] == [{"severity": "ERROR", "code": "MISSING_TRANSITION_TARGET",
                                   "message": 'State "B" is not reachable.', "location": "/States/B"}]
    ok = sfn.validate_state_machine_definition(definition=PASS)
    assert (ok["result"], ok["diagnostics"], ok["truncated"]) == ("OK", [], False)


def test_names_and_arns_are_checked(sfn):
    with pytest.raises(ClientError) as e:
        sfn.create_state_machine(name="has space", definition=PASS, roleArn=ROLE)
    assert error(e) == ("InvalidName", "Invalid Name: 'has space'")
    with pytest.raises(ClientError) as e:
        sfn.describe_state_machine(stateMachineArn="not-an-arn")
    assert error(e)[0] == "InvalidArn"
    with pytest.raises(ClientError) as e:
        sfn.describe_state_machine(stateMachineArn=f"{ARN}:activity:a")
    assert error(e) == ("InvalidArn", "Invalid Arn: 'Resource type not valid in this context: activity'")


def test_update_changes_the_revision_and_publish_numbers_versions(sfn):
    arn = sfn.create_state_machine(name="m", definition=PASS, roleArn=ROLE, publish=True,
                                   versionDescription="first")["stateMachineVersionArn"]
    assert arn == f"{ARN}:stateMachine:m:1"
    machine = f"{ARN}:stateMachine:m"
    rev = sfn.describe_state_machine(stateMachineArn=machine)["revisionId"]
    assert sfn.publish_state_machine_version(stateMachineArn=machine)["stateMachineVersionArn"] == arn
    other = json.dumps({"StartAt": "B", "States": {"B": {"Type": "Succeed"}}})
    up = sfn.update_state_machine(stateMachineArn=machine, definition=other, publish=True)
    assert up["stateMachineVersionArn"] == f"{machine}:2" and up["revisionId"] != rev
    with pytest.raises(ClientError) as e:
        sfn.publish_state_machine_version(stateMachineArn=machine, revisionId=rev)
    assert error(e)[0] == "ConflictException"
    v1 = sfn.describe_state_machine(stateMachineArn=arn)
    assert v1["definition"] == PASS and v1["description"] == "first" and v1["stateMachineArn"] == arn
    versions = sfn.list_state_machine_versions(stateMachineArn=machine)["stateMachineVersions"]
    assert [v["stateMachineVersionArn"] for v in versions] == [f"{machine}:2", arn]
    sfn.delete_state_machine_version(stateMachineVersionArn=f"{machine}:2")
    up = sfn.update_state_machine(stateMachineArn=machine, roleArn=ROLE + "2", publish=True)
    assert up["stateMachineVersionArn"] == f"{machine}:3"
    with pytest.raises(ClientError) as e:
        sfn.update_state_machine(stateMachineArn=machine)
    assert error(e)[0] == "MissingRequiredParameter"


def test_aliases_route_to_versions_and_hold_them(sfn):
    machine = sfn.create_state_machine(name="m", definition=PASS, roleArn=ROLE, publish=True)["stateMachineArn"]
    alias = sfn.create_state_machine_alias(
        name="prod", routingConfiguration=[{"stateMachineVersionArn": f"{machine}:1", "weight": 100}])
    assert alias["stateMachineAliasArn"] == f"{machine}:prod"
    d = sfn.describe_state_machine_alias(stateMachineAliasArn=f"{machine}:prod")
    assert d["name"] == "prod" and d["routingConfiguration"] == [
        {"stateMachineVersionArn": f"{machine}:1", "weight": 100}]
    listed = sfn.list_state_machine_aliases(stateMachineArn=machine)["stateMachineAliases"]
    assert [a["stateMachineAliasArn"] for a in listed] == [f"{machine}:prod"]
    with pytest.raises(ClientError) as e:
        sfn.delete_state_machine_version(stateMachineVersionArn=f"{machine}:1")
    assert error(e) == ("ConflictException", "Version to be deleted must not be referenced by an alias. "
                        "Current list of aliases referencing this version: [prod]")
    with pytest.raises(ClientError) as e:
        sfn.create_state_machine_alias(
            name="half", routingConfiguration=[{"stateMachineVersionArn": f"{machine}:1", "weight": 50}])
    assert error(e)[0] == "ValidationException"
    sfn.update_state_machine_alias(stateMachineAliasArn=f"{machine}:prod", description="d")
    assert sfn.describe_state_machine_alias(stateMachineAliasArn=f"{machine}:prod")["description"] == "d"
    sfn.delete_state_machine_alias(stateMachineAliasArn=f"{machine}:prod")
    with pytest.raises(ClientError) as e:
        sfn.describe_state_machine_alias(stateMachineAliasArn=f"{machine}:prod")
    assert error(e)[0] == "ResourceNotFound"
    sfn.delete_state_machine_version(stateMachineVersionArn=f"{machine}:1")


def test_activities_and_tags(sfn):
    act = sfn.create_activity(name="work", tags=[{"key": "team", "value": "a"}])
    assert act["activityArn"] == f"{ARN}:activity:work"
    assert sfn.create_activity(name="work")["activityArn"] == act["activityArn"]
    assert sfn.describe_activity(activityArn=act["activityArn"])["name"] == "work"
    assert [a["name"] for a in sfn.list_activities()["activities"]] == ["work"]
    assert sfn.list_tags_for_resource(resourceArn=act["activityArn"])["tags"] == [{"key": "team", "value": "a"}]
    machine = sfn.create_state_machine(name="m", definition=PASS, roleArn=ROLE)["stateMachineArn"]
    sfn.tag_resource(resourceArn=machine, tags=[{"key": "b", "value": "2"}, {"key": "a", "value": "1"}])
    sfn.untag_resource(resourceArn=machine, tagKeys=["b"])
    assert sfn.list_tags_for_resource(resourceArn=machine)["tags"] == [{"key": "a", "value": "1"}]
    sfn.delete_activity(activityArn=act["activityArn"])
    with pytest.raises(ClientError) as e:
        sfn.describe_activity(activityArn=act["activityArn"])
    assert error(e) == ("ActivityDoesNotExist", f"Activity Does Not Exist: '{ARN}:activity:work'")
    with pytest.raises(ClientError) as e:
        sfn.list_tags_for_resource(resourceArn=f"{ARN}:stateMachine:none")
    assert error(e)[0] == "ResourceNotFound"


def test_lists_page_with_next_tokens(sfn):
    for i in range(5):
        sfn.create_state_machine(name=f"m{i}", definition=PASS, roleArn=ROLE)
    first = sfn.list_state_machines(maxResults=2)
    assert [m["name"] for m in first["stateMachines"]] == ["m0", "m1"]
    rest = sfn.list_state_machines(maxResults=10, nextToken=first["nextToken"])
    assert [m["name"] for m in rest["stateMachines"]] == ["m2", "m3", "m4"] and "nextToken" not in rest
    with pytest.raises(ClientError) as e:
        sfn.list_state_machines(nextToken="bogus")
    assert error(e)[0] == "InvalidToken"
