"""`--setup FILE.lua`: scripts seed the server through the same handlers HTTP reaches,
before the port opens; any failure stops start-up with exit 1 and a message naming the
script, the line and the cause."""

from __future__ import annotations

import subprocess
import time

import pytest

from roto_server import RotoServer, binary


def script(tmp_path, text: str, name: str = "setup.lua"):
    path = tmp_path / name
    path.write_text(text)
    return path


def failed_start(*setup_paths, env=None):
    """Runs the binary with the scripts; returns (exit code, stdout, stderr)."""
    args = [str(binary()), "--ephemeral", "--port", "0"]
    for path in setup_paths:
        args += ["--setup", str(path)]
    proc = subprocess.run(args, capture_output=True, text=True, timeout=30, env=env)
    return proc.returncode, proc.stdout, proc.stderr


def test_setup_creates_resources_that_sdk_clients_see(tmp_path):
    path = script(tmp_path, """
        aws.s3.CreateBucket{Bucket = "seeded"}
        aws.s3.PutObject{Bucket = "seeded", Key = "bin", Body = "\\0\\1\\2\\255"}
        local q = aws.sqs.CreateQueue{QueueName = "jobs"}
        aws.sqs.SendMessage{QueueUrl = q.QueueUrl, MessageBody = "hello"}
        aws.dynamodb.CreateTable{
          TableName = "items",
          AttributeDefinitions = {{AttributeName = "id", AttributeType = "S"}},
          KeySchema = {{AttributeName = "id", KeyType = "HASH"}},
          BillingMode = "PAY_PER_REQUEST",
        }
        aws.dynamodb.PutItem{TableName = "items", Item = {id = {S = "a"}, n = {N = 9007199254740993}}}
    """)
    with RotoServer("--ephemeral", "--setup", str(path)) as s:
        s3, sqs, ddb = s.client("s3"), s.client("sqs"), s.client("dynamodb")
        assert s3.get_object(Bucket="seeded", Key="bin")["Body"].read() == b"\x00\x01\x02\xff"
        url = sqs.get_queue_url(QueueName="jobs")["QueueUrl"]
        assert sqs.receive_message(QueueUrl=url)["Messages"][0]["Body"] == "hello"
        item = ddb.get_item(TableName="items", Key={"id": {"S": "a"}})["Item"]
        assert item["n"] == {"N": "9007199254740993"}


def test_setup_calls_are_traced_before_the_first_http_request(tmp_path):
    path = script(tmp_path, 'aws.sqs.CreateQueue{QueueName = "first"}')
    with RotoServer("--ephemeral", "--setup", str(path)) as s:
        entries = s.traces()
        assert entries[0]["service"] == "sqs" and entries[0]["operation"] == "CreateQueue"
        assert entries[0]["source"] == "dispatcher"
        assert all(e["service"] == "sts" for e in entries[1:])


def test_scripts_run_in_order_and_share_state(tmp_path):
    first = script(tmp_path, 'aws.sqs.CreateQueue{QueueName = "one"}', "first.lua")
    second = script(tmp_path, """
        local url = aws.sqs.GetQueueUrl{QueueName = "one"}.QueueUrl
        aws.sqs.SendMessage{QueueUrl = url, MessageBody = "from second"}
    """, "second.lua")
    with RotoServer("--ephemeral", "--setup", str(first), "--setup", str(second)) as s:
        sqs = s.client("sqs")
        url = sqs.get_queue_url(QueueName="one")["QueueUrl"]
        assert sqs.receive_message(QueueUrl=url)["Messages"][0]["Body"] == "from second"


def test_aws_with_seeds_another_account_and_region(tmp_path):
    path = script(tmp_path, """
        aws.with{account = "111111111111", region = "eu-west-1"}(function()
          aws.sqs.CreateQueue{QueueName = "scoped"}
        end)
    """)
    with RotoServer("--ephemeral", "--setup", str(path)) as s:
        scoped = s.client("sqs", aws_access_key_id="111111111111", region_name="eu-west-1")
        assert scoped.list_queues()["QueueUrls"][0].endswith("/111111111111/scoped")
        assert "QueueUrls" not in s.client("sqs").list_queues()


def test_fixtures_env_and_print_do_not_disturb_the_start_line(tmp_path, monkeypatch):
    (tmp_path / "fixtures").mkdir()
    (tmp_path / "fixtures" / "queues.json").write_text('["a", "b"]')
    path = script(tmp_path, """
        print("printing goes to stderr")
        for _, name in ipairs(roto.json.decode(roto.read_file("fixtures/queues.json"))) do
          aws.sqs.CreateQueue{QueueName = roto.env("QUEUE_PREFIX") .. name}
        end
    """)
    with RotoServer("--ephemeral", "--setup", str(path), env={"QUEUE_PREFIX": "p-"}, cwd="/") as s:
        urls = s.client("sqs").list_queues()["QueueUrls"]
        assert sorted(u.rsplit("/", 1)[1] for u in urls) == ["p-a", "p-b"]


def test_an_aws_error_stops_start_up_naming_script_line_and_code(tmp_path):
    path = script(tmp_path, 'aws.sqs.CreateQueue{QueueName = "ok"}\naws.sqs.GetQueueUrl{QueueName = "missing"}\n')
    code, out, err = failed_start(path)
    assert code == 1
    assert "listening" not in out
    assert f"setup script {path} failed: {path.name}:2: aws.sqs.GetQueueUrl failed with AWS error QueueDoesNotExist" in err


@pytest.mark.parametrize("text, expected", [
    ("local = 1\n", "syntax error: {path}:1:"),
    ("\nerror('no fixtures')\n", "{path}:2: no fixtures"),
    ("aws.sqss.CreateQueue{QueueName = 'q'}\n", "{path}:1: aws.sqss: no such service; did you mean 'sqs'?"),
    ("aws.sqs.CreatQueue{QueueName = 'q'}\n", "{path}:1: aws.sqs.CreatQueue: no such operation; did you mean 'CreateQueue'?"),
    ("aws.sqs.CreateQueue{QueueName = 42.5}\n", None),
    ("aws.sqs.CreateQueue{Name = 'q'}\n", "{path}:1: aws.sqs.CreateQueue: input: no member named 'Name'"),
    ("aws.sqs.CreateQueue{QueueName = {}}\n", "{path}:1: aws.sqs.CreateQueue: input.QueueName: expected a string, got a table"),
    ("roto.read_file('../outside.txt')\n", "{path}:1: roto.read_file: '../outside.txt' is outside the script's directory"),
    ("roto.wait_for(function() return false end, 0.05)\n", "{path}:1: roto.wait_for: the condition was still false after 0.05 seconds"),
    ("os.execute('true')\n", "{path}:1: attempt to call a nil value (field 'execute')"),
    ("io.open('x', 'w')\n", "{path}:1: attempt to index a nil value (global 'io')"),
])
def test_script_errors_stop_start_up_with_an_actionable_message(tmp_path, text, expected):
    path = script(tmp_path, text)
    code, out, err = failed_start(path)
    if expected is None:
        # A float where a string is expected is converted (DynamoDB N style); the queue
        # name "42.5" is then refused by SQS itself.
        assert code == 1 and "AWS error InvalidParameterValue" in err, err
        return
    assert code == 1, err
    assert "listening" not in out
    assert f"setup script {path} failed: " + expected.format(path=path.name) in err, err


def test_a_missing_script_stops_start_up(tmp_path):
    code, _, err = failed_start(tmp_path / "absent.lua")
    assert code == 1
    assert f"setup script {tmp_path / 'absent.lua'} failed: cannot read it" in err


def test_setup_seeds_kinesis_and_firehose_and_waits_for_their_deliveries(tmp_path):
    path = script(tmp_path, """
        aws.s3.CreateBucket{Bucket = "lake"}
        aws.kinesis.CreateStream{StreamName = "clicks", ShardCount = 1}
        local arn = aws.kinesis.DescribeStreamSummary{StreamName = "clicks"}
          .StreamDescriptionSummary.StreamARN
        aws.firehose.CreateDeliveryStream{
          DeliveryStreamName = "to-lake",
          DeliveryStreamType = "KinesisStreamAsSource",
          KinesisStreamSourceConfiguration = {
            KinesisStreamARN = arn, RoleARN = "arn:aws:iam::000000000000:role/firehose"},
          ExtendedS3DestinationConfiguration = {
            BucketARN = "arn:aws:s3:::lake", RoleARN = "arn:aws:iam::000000000000:role/firehose",
            BufferingHints = {IntervalInSeconds = 0, SizeInMBs = 1}},
        }
        aws.dynamodb.CreateTable{
          TableName = "carts",
          AttributeDefinitions = {{AttributeName = "id", AttributeType = "S"}},
          KeySchema = {{AttributeName = "id", KeyType = "HASH"}},
          BillingMode = "PAY_PER_REQUEST",
        }
        aws.dynamodb.EnableKinesisStreamingDestination{TableName = "carts", StreamArn = arn}
        aws.dynamodb.PutItem{TableName = "carts", Item = {id = {S = "c1"}}}
        aws.kinesis.PutRecord{StreamName = "clicks", Data = "click", PartitionKey = "k"}
        -- The delivery stream reads from its creation on: both records reach the bucket.
        local key = roto.wait_for(function()
          local listed = aws.s3.ListObjectsV2{Bucket = "lake"}
          return listed.Contents and listed.Contents[1] and listed.Contents[1].Key
        end, 10)
        print("delivered " .. key)
    """)
    with RotoServer("--ephemeral", "--setup", str(path)) as s:
        kinesis, s3 = s.client("kinesis"), s.client("s3")
        kinesis.get_waiter("stream_exists").wait(StreamName="clicks", WaiterConfig={"Delay": 1, "MaxAttempts": 1})
        s.wait_for_delivery(service="dynamodb", target=kinesis.describe_stream_summary(
            StreamName="clicks")["StreamDescriptionSummary"]["StreamARN"], outcome="delivered")
        s.wait_for_delivery(service="firehose", target="arn:aws:s3:::lake", outcome="delivered")
        deadline = time.monotonic() + 10
        while True:  # the two records may reach the bucket in one object or two
            bodies = b"".join(s3.get_object(Bucket="lake", Key=o["Key"])["Body"].read()
                              for o in s3.list_objects_v2(Bucket="lake")["Contents"])
            if b"click" in bodies and b'"tableName":"carts"' in bodies or time.monotonic() > deadline:
                break
            time.sleep(0.1)
        assert b"click" in bodies
        assert b'"tableName":"carts"' in bodies
