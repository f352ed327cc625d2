"""FIFO ordering and exactly-once checks under concurrency, shared by the SQS and SNS tests:
twin producers (two threads sending the same stream, so every message is also a concurrent
duplicate), several consumers, and the assertions on what they received."""

from __future__ import annotations

import threading
import time


def twin_producers(new_client, send, streams: int = 3, length: int = 30) -> dict:
    """Runs two threads per stream, each with its own client from `new_client`, that send
    the same stream of messages concurrently (`send(client, group, dedup_id, body)`: message
    i of stream s is body "s:i" in group g{i % 3} with deduplication id "s{s}-{i}");
    returns {deduplication id: [both responses]}."""
    responses: dict = {}
    lock = threading.Lock()
    failures = []

    def produce(stream):
        c = new_client()
        try:
            for i in range(length):
                dedup = f"s{stream}-{i}"
                out = send(c, f"g{i % 3}", dedup, f"{stream}:{i}")
                with lock:
                    responses.setdefault(dedup, []).append(out)
        except Exception as e:  # noqa: BLE001 (reported below)
            failures.append(e)

    threads = [threading.Thread(target=produce, args=(s,)) for s in range(streams) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures, failures
    return responses


def consume_fifo(client, url, expected: int, consumers: int = 3) -> list:
    """Receives with several threads until `expected` messages arrived, recording each
    batch (under a lock, before deleting it, so a group's records stay in order)."""
    received, lock, failures = [], threading.Lock(), []
    deadline = time.monotonic() + 30

    def consume():
        c = client("sqs")
        try:
            while time.monotonic() < deadline:
                with lock:
                    if len(received) >= expected:
                        return
                got = c.receive_message(QueueUrl=url, MaxNumberOfMessages=10, WaitTimeSeconds=1,
                                        VisibilityTimeout=60, AttributeNames=["All"]).get("Messages", [])
                with lock:
                    received.extend(got)
                for m in got:
                    c.delete_message(QueueUrl=url, ReceiptHandle=m["ReceiptHandle"])
        except Exception as e:  # noqa: BLE001 (reported below)
            failures.append(e)

    threads = [threading.Thread(target=consume) for _ in range(consumers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures, failures
    return received


def assert_fifo_delivery(received: list, responses: dict) -> None:
    """Every message once, each group in sequence-number order, each stream's messages of a
    group in the order the stream sent them; twins got the same id and sequence number."""
    for dedup, (first, second) in responses.items():
        assert (first["MessageId"], first["SequenceNumber"]) == (second["MessageId"], second["SequenceNumber"]), dedup
    bodies = [m["Body"] for m in received]
    assert sorted(bodies) == sorted(f"{d[1:].split('-')[0]}:{d.split('-')[1]}" for d in responses)
    by_group: dict = {}
    for m in received:
        by_group.setdefault(m["Attributes"]["MessageGroupId"], []).append(m)
    assert sorted(by_group) == ["g0", "g1", "g2"]
    for group, messages in by_group.items():
        sequence = [int(m["Attributes"]["SequenceNumber"]) for m in messages]
        assert sequence == sorted(sequence), group
        for stream in {m["Body"].split(":")[0] for m in messages}:
            order = [int(m["Body"].split(":")[1]) for m in messages if m["Body"].startswith(f"{stream}:")]
            assert order == sorted(order), (group, stream)
