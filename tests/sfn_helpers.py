"""Helpers the Step Functions test files share: machines from a dict of states, runs
waited to their end, their output and history."""

from __future__ import annotations

import json
import time

ROLE = "arn:aws:iam::000000000000:role/sfn"


def error(excinfo):
    return excinfo.value.response["Error"]["Code"], excinfo.value.response["Error"]["Message"]


def machine(sfn, states, start=None, name="m", **extra):
    definition = {"StartAt": start or next(iter(states)), "States": states, **extra}
    return sfn.create_state_machine(name=name, definition=json.dumps(definition), roleArn=ROLE)["stateMachineArn"]


def finish(sfn, arn, timeout=10):
    deadline = time.time() + timeout
    while time.time() < deadline:
        out = sfn.describe_execution(executionArn=arn)
        if out["status"] != "RUNNING":
            return out
        time.sleep(0.02)
    raise AssertionError(f"{arn} still running")


def run(sfn, states, input=None, **extra):
    arn = machine(sfn, states, **extra)
    execution = sfn.start_execution(stateMachineArn=arn, input=json.dumps(input if input is not None else {}))
    return finish(sfn, execution["executionArn"])


def output(described):
    assert described["status"] == "SUCCEEDED", described
    return json.loads(described["output"])


def history(sfn, arn):
    return sfn.get_execution_history(executionArn=arn)["events"]
