"""The roto-pytest plugin's fixtures, used as a user would use them."""

from __future__ import annotations

import pytest

from roto_server import RotoServer

_seen_ports: list[int] = []


def test_roto_is_a_ready_server_with_a_client_factory(roto):
    assert roto.endpoint == f"http://127.0.0.1:{roto.port}"
    assert roto.client("sts").get_caller_identity()["Account"] == "000000000000"


def test_roto_is_fresh_for_each_test(roto):
    assert "QueueUrls" not in roto.client("sqs").list_queues()
    roto.client("sqs").create_queue(QueueName="left-behind")


def test_wait_for_trace_returns_the_matching_entry(roto):
    roto.client("sqs").create_queue(QueueName="q")
    entry = roto.wait_for_trace(1, service="sqs", operation="CreateQueue")
    assert entry["status"] == 200


def test_wait_for_delivery_fails_with_what_the_trace_holds(roto):
    with pytest.raises(AssertionError, match="no trace entry matched"):
        roto.wait_for_delivery(0.1, service="s3")


@pytest.mark.parametrize("run", [1, 2])
def test_roto_session_is_one_server_reset_before_each_test(roto_session, run):
    _seen_ports.append(roto_session.port)
    assert len(set(_seen_ports)) == 1
    sqs = roto_session.client("sqs")
    assert "QueueUrls" not in sqs.list_queues()
    sqs.create_queue(QueueName=f"run-{run}")


def test_a_failing_start_reports_exit_code_and_stderr(tmp_path):
    bad = tmp_path / "bad.lua"
    bad.write_text("error('broken fixture')")
    with pytest.raises(RuntimeError, match=r"exited with 1 before it listened.*bad.lua:1: broken fixture"):
        RotoServer("--ephemeral", "--setup", str(bad)).start()
