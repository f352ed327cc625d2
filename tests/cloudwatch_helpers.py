"""Helpers the CloudWatch test files share: AWS errors as tuples, minute-aligned times,
the server clock, waiting for an alarm's state, and reading a metric's statistics."""

from __future__ import annotations

import json
import time
from datetime import datetime, timedelta, timezone


def error(excinfo):
    """(code, message, HTTP status) of a ClientError caught by pytest.raises."""
    e = excinfo.value.response
    return e["Error"]["Code"], e["Error"]["Message"], e["ResponseMetadata"]["HTTPStatusCode"]


def minute(offset=0):
    """The start of the current wall-clock minute, `offset` minutes on."""
    now = datetime.now(timezone.utc).replace(second=0, microsecond=0)
    return now + timedelta(minutes=offset)


def server_now(server) -> datetime:
    """The server clock's time (it moves ahead of the wall clock when advanced)."""
    _, _, body = server.request("GET", "/_roto/clock")
    return datetime.fromtimestamp(json.loads(body)["now_millis"] / 1000, timezone.utc)


def wait_state(cw, name, state, timeout=5.0):
    """The alarm `name` once it is in `state`; fails after `timeout` seconds."""
    deadline = time.time() + timeout
    while True:
        a = cw.describe_alarms(AlarmNames=[name])["MetricAlarms"][0]
        if a["StateValue"] == state or time.time() > deadline:
            assert a["StateValue"] == state, a
            return a
        time.sleep(0.05)


def stats(cw, server, namespace, name, dims, statistics=("Sum",), unit=None):
    """The one-hour statistics of a metric around now, summed over its datapoints."""
    now = server_now(server)
    kw = {"Unit": unit} if unit else {}
    points = cw.get_metric_statistics(
        Namespace=namespace, MetricName=name,
        Dimensions=[{"Name": k, "Value": v} for k, v in dims.items()],
        StartTime=now - timedelta(minutes=30), EndTime=now + timedelta(minutes=5),
        Period=3600, Statistics=list(statistics), **kw)["Datapoints"]
    return points[0] if points else None


def eventually(read, timeout=10.0):
    """`read()` once it gives something truthy."""
    deadline = time.time() + timeout
    while True:
        value = read()
        if value or time.time() > deadline:
            return value
        time.sleep(0.1)
