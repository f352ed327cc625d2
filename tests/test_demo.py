"""The demo shop (examples/demo/setup.lua): what its README promises exists once the server
answers: the resources of all eleven services, and the results of the order's flow (the
function's answer on the order, the deliveries in the queues, the logs and the trace)."""

from __future__ import annotations

import json
import pathlib

import pytest

from roto_server import RotoServer

SETUP = pathlib.Path(__file__).resolve().parent.parent / "examples" / "demo" / "setup.lua"
ACCOUNT = "000000000000"
PROCESSOR = "shop-order-processor"
PROCESSOR_ARN = f"arn:aws:lambda:us-east-1:{ACCOUNT}:function:{PROCESSOR}"


@pytest.fixture(scope="module")
def shop():
    """One server seeded with the demo for the whole module; tests only read, or receive
    with a zero visibility timeout, so they do not disturb each other."""
    with RotoServer("--ephemeral", "--setup", str(SETUP)) as server:
        yield server


def queue_url(shop, name: str) -> str:
    return shop.client("sqs").get_queue_url(QueueName=name)["QueueUrl"]


def peek(shop, name: str, **kwargs) -> list[dict]:
    """The queue's messages, received without hiding them."""
    return shop.client("sqs").receive_message(
        QueueUrl=queue_url(shop, name), MaxNumberOfMessages=10, VisibilityTimeout=0, **kwargs
    ).get("Messages", [])


def test_s3_holds_the_catalogue_images_and_the_signed_receipt(shop):
    s3, kms = shop.client("s3"), shop.client("kms")
    assert sorted(b["Name"] for b in s3.list_buckets()["Buckets"]) == ["shop-assets", "shop-receipts"]
    keys = [o["Key"] for o in s3.list_objects_v2(Bucket="shop-assets")["Contents"]]
    assert keys == ["catalog/products.json", "images/mug-blue.svg", "images/poster-a2.svg", "images/tee-logo.svg"]
    catalogue = s3.get_object(Bucket="shop-assets", Key="catalog/products.json")
    assert catalogue["ContentType"] == "application/json"
    assert [p["sku"] for p in json.load(catalogue["Body"])] == ["mug-blue", "tee-logo", "poster-a2"]

    receipt = s3.get_object(Bucket="shop-receipts", Key="receipts/o-1003.txt")["Body"].read()
    assert receipt == b"Receipt o-1003\nCustomer: alice\nTotal: 44.99 EUR\n"
    signature = s3.get_object(Bucket="shop-receipts", Key="signatures/o-1003.sig")
    assert signature["Metadata"] == {"signing-key": "alias/shop-receipts"}
    signature = signature["Body"].read()
    verify = dict(KeyId="alias/shop-receipts", SigningAlgorithm="ECDSA_SHA_256", Signature=signature)
    assert kms.verify(Message=receipt, **verify)["SignatureValid"] is True
    with pytest.raises(kms.exceptions.KMSInvalidSignatureException):
        kms.verify(Message=receipt.replace(b"44.99", b"4.99"), **verify)


def test_the_orders_table_has_its_index_and_the_order_the_function_priced(shop):
    ddb = shop.client("dynamodb")
    table = ddb.describe_table(TableName="shop-orders")["Table"]
    [index] = table["GlobalSecondaryIndexes"]
    assert index["IndexName"] == "by-customer"
    assert [k["AttributeName"] for k in index["KeySchema"]] == ["customerId", "createdAt"]
    assert ddb.scan(TableName="shop-orders", Select="COUNT")["Count"] == 3

    alice = ddb.query(TableName="shop-orders", IndexName="by-customer",
                      KeyConditionExpression="customerId = :c",
                      ExpressionAttributeValues={":c": {"S": "alice"}})["Items"]
    assert [(i["orderId"]["S"], i["status"]["S"]) for i in alice] == [("o-1001", "DELIVERED"), ("o-1003", "CONFIRMED")]

    order = ddb.get_item(TableName="shop-orders", Key={"orderId": {"S": "o-1003"}})["Item"]
    assert order["total"] == {"N": "44.99"}  # 2 x 12.50 + 19.99, computed by the function
    assert [line["M"]["sku"]["S"] for line in order["lines"]["L"]] == ["mug-blue", "tee-logo"]


def test_queues_are_configured_as_the_readme_says(shop):
    sqs = shop.client("sqs")
    names = sorted(u.rsplit("/", 1)[1] for u in sqs.list_queues()["QueueUrls"])
    assert names == ["shop-fulfilment.fifo", "shop-notifications", "shop-notifications-dlq", "shop-receipt-events"]
    fifo = sqs.get_queue_attributes(QueueUrl=queue_url(shop, "shop-fulfilment.fifo"), AttributeNames=["All"])
    assert fifo["Attributes"]["FifoQueue"] == "true"
    assert fifo["Attributes"]["ContentBasedDeduplication"] == "true"
    redrive = sqs.get_queue_attributes(QueueUrl=queue_url(shop, "shop-notifications"),
                                       AttributeNames=["RedrivePolicy"])["Attributes"]["RedrivePolicy"]
    assert json.loads(redrive) == {
        "deadLetterTargetArn": f"arn:aws:sqs:us-east-1:{ACCOUNT}:shop-notifications-dlq", "maxReceiveCount": 3}
    sources = sqs.list_dead_letter_source_queues(QueueUrl=queue_url(shop, "shop-notifications-dlq"))["queueUrls"]
    assert sources == [queue_url(shop, "shop-notifications")]


def test_eventbridge_delivered_the_placed_order_to_the_fifo_queue_and_the_audit_log(shop):
    [message] = peek(shop, "shop-fulfilment.fifo", AttributeNames=["MessageGroupId"])
    assert message["Attributes"]["MessageGroupId"] == "orders"
    event = json.loads(message["Body"])
    assert (event["source"], event["detail-type"]) == ("shop.orders", "OrderPlaced")
    assert event["detail"]["orderId"] == "o-1003"

    logged = shop.client("logs").filter_log_events(logGroupName="/aws/events/shop")["events"]
    assert [json.loads(e["message"])["id"] for e in logged] == [event["id"]]

    events = shop.client("events")
    rules = events.list_rules(EventBusName="shop")["Rules"]
    assert sorted(r["Name"] for r in rules) == ["audit-log", "order-placed"]
    [target] = events.list_targets_by_rule(EventBusName="shop", Rule="order-placed")["Targets"]
    assert target["Arn"] == f"arn:aws:sqs:us-east-1:{ACCOUNT}:shop-fulfilment.fifo"


def test_sns_delivered_the_confirmation_to_the_queue_and_the_function(shop):
    subscriptions = shop.client("sns").list_subscriptions()["Subscriptions"]
    assert sorted((s["Protocol"], s["Endpoint"]) for s in subscriptions) == [
        ("lambda", PROCESSOR_ARN), ("sqs", f"arn:aws:sqs:us-east-1:{ACCOUNT}:shop-notifications")]

    [message] = peek(shop, "shop-notifications")
    envelope = json.loads(message["Body"])
    assert envelope["Type"] == "Notification"
    assert envelope["Subject"] == "Order o-1003 confirmed"
    assert json.loads(envelope["Message"]) == {"orderId": "o-1003", "customerId": "alice", "status": "CONFIRMED"}

    deliveries = shop.traces(kind="delivery", service="sns")
    assert sorted((d["target"], d["outcome"]) for d in deliveries) == [
        (PROCESSOR_ARN, "delivered"), (f"arn:aws:sqs:us-east-1:{ACCOUNT}:shop-notifications", "delivered")]


def test_s3_notified_the_receipt_queue_of_the_receipt_alone(shop):
    bodies = [json.loads(m["Body"]) for m in peek(shop, "shop-receipt-events")]
    assert len(bodies) == 2
    test_event, created = sorted(bodies, key=lambda b: "Records" in b)
    assert test_event["Event"] == "s3:TestEvent"
    [record] = created["Records"]
    assert record["eventName"] == "ObjectCreated:Put"
    assert record["s3"]["object"]["key"] == "receipts/o-1003.txt"  # signatures/ is not notified
    traced = shop.traces(kind="delivery", service="s3", operation="s3:ObjectCreated:Put")
    assert [(t["source"], t["outcome"]) for t in traced] == [("arn:aws:s3:::shop-receipts", "delivered")]


def test_the_function_logged_both_invocations_in_cloudwatch_logs(shop):
    config = shop.client("lambda").get_function_configuration(FunctionName=PROCESSOR)
    assert (config["Runtime"], config["Handler"]) == ("python3.12", "orders.handler")
    assert config["Role"] == shop.client("iam").get_role(RoleName=PROCESSOR)["Role"]["Arn"]

    messages = [e["message"] for e in shop.client("logs").filter_log_events(
        logGroupName=f"/aws/lambda/{PROCESSOR}")["events"]]
    assert "order o-1003: 2 lines, total 44.99 EUR" in [m.strip() for m in messages]
    assert "emailing alice: order o-1003 is CONFIRMED" in [m.strip() for m in messages]
    assert sum(m.startswith("START RequestId:") for m in messages) >= 2
    assert sum(m.startswith("REPORT RequestId:") for m in messages) >= 2


def test_the_function_prices_a_new_order_and_reports_bad_ones(shop):
    lam = shop.client("lambda")
    order = {"orderId": "o-2000", "lines": [{"sku": "poster-a2", "quantity": 2, "unitCents": 900}]}
    answer = lam.invoke(FunctionName=PROCESSOR, Payload=json.dumps(order).encode())
    assert "FunctionError" not in answer
    assert json.load(answer["Payload"]) == {"orderId": "o-2000", "status": "CONFIRMED", "total": "18.00", "currency": "EUR"}

    failed = lam.invoke(FunctionName=PROCESSOR, Payload=b'{"orderId": "o-2001"}')
    assert failed["FunctionError"] == "Unhandled"
    assert json.load(failed["Payload"])["errorType"] == "KeyError"


def test_logs_hold_the_web_access_log_with_its_retention(shop):
    logs = shop.client("logs")
    groups = {g["logGroupName"]: g for g in logs.describe_log_groups()["logGroups"]}
    assert sorted(groups) == ["/aws/events/shop", f"/aws/lambda/{PROCESSOR}", "/shop/web"]
    assert groups["/shop/web"]["retentionInDays"] == 14
    events = logs.get_log_events(logGroupName="/shop/web", logStreamName="web-1", startFromHead=True)["events"]
    assert [e["message"] for e in events] == [
        "GET /products 200 12ms", "GET /products/mug-blue 200 4ms", "POST /orders 201 31ms"]


def test_secrets_and_parameters_are_encrypted_under_the_shop_key(shop):
    kms, secrets, ssm = shop.client("kms"), shop.client("secretsmanager"), shop.client("ssm")
    data_key = kms.describe_key(KeyId="alias/shop-data")["KeyMetadata"]
    assert kms.get_key_rotation_status(KeyId=data_key["KeyId"])["KeyRotationEnabled"] is True
    receipts_key = kms.describe_key(KeyId="alias/shop-receipts")["KeyMetadata"]
    assert (receipts_key["KeySpec"], receipts_key["KeyUsage"]) == ("ECC_NIST_P256", "SIGN_VERIFY")

    listed = {s["Name"]: s for s in secrets.list_secrets()["SecretList"]}
    assert sorted(listed) == ["shop/db/credentials", "shop/payments/webhook-secret"]
    assert all(s["KmsKeyId"] in (data_key["Arn"], data_key["KeyId"], "alias/shop-data") for s in listed.values())
    login = json.loads(secrets.get_secret_value(SecretId="shop/db/credentials")["SecretString"])
    assert login == {"username": "shop", "password": "demo-only-password"}

    parameters = ssm.get_parameters_by_path(Path="/shop/config")["Parameters"]
    assert sorted((p["Name"], p["Type"]) for p in parameters) == [
        ("/shop/config/currency", "String"),
        ("/shop/config/payments-api-key", "SecureString"),
        ("/shop/config/shipping-countries", "StringList")]
    encrypted = ssm.get_parameter(Name="/shop/config/payments-api-key")["Parameter"]["Value"]
    assert encrypted != "pk_demo_51HxShop"
    decrypted = ssm.get_parameter(Name="/shop/config/payments-api-key", WithDecryption=True)["Parameter"]["Value"]
    assert decrypted == "pk_demo_51HxShop"


def test_iam_has_the_execution_role_and_its_policies(shop):
    iam = shop.client("iam")
    role = iam.get_role(RoleName=PROCESSOR)["Role"]
    [statement] = role["AssumeRolePolicyDocument"]["Statement"]
    assert statement["Principal"] == {"Service": "lambda.amazonaws.com"}
    attached = iam.list_attached_role_policies(RoleName=PROCESSOR)["AttachedPolicies"]
    assert sorted(p["PolicyName"] for p in attached) == ["AWSLambdaBasicExecutionRole", "shop-orders-access"]
    assert iam.list_role_policies(RoleName=PROCESSOR)["PolicyNames"] == ["read-shop-config"]
    with pytest.raises(iam.exceptions.NoSuchEntityException):
        iam.get_role_policy(RoleName=PROCESSOR, PolicyName="no-such-policy")


def test_every_delivery_of_start_up_was_delivered_before_the_server_answered(shop):
    first_request = min(t["seq"] for t in shop.traces(kind="request") if t.get("source") != "dispatcher")
    startup = [t for t in shop.traces(kind="delivery") if t["seq"] < first_request]
    assert {(t["service"], t["operation"]) for t in startup} >= {
        ("s3", "s3:TestEvent"), ("s3", "s3:ObjectCreated:Put"), ("events", "events:RuleTriggered"),
        ("sns", "sns:Notification"), ("lambda", "Invoke")}
    assert all(t["outcome"] == "delivered" for t in startup)


def test_a_notification_received_three_times_moves_to_the_dead_letter_queue():
    with RotoServer("--ephemeral", "--setup", str(SETUP)) as server:
        sqs = server.client("sqs")
        source, dlq = queue_url(server, "shop-notifications"), queue_url(server, "shop-notifications-dlq")
        for _ in range(3):
            [message] = sqs.receive_message(QueueUrl=source, VisibilityTimeout=0)["Messages"]
        assert "Messages" not in sqs.receive_message(QueueUrl=source, VisibilityTimeout=0)
        [moved] = sqs.receive_message(QueueUrl=dlq)["Messages"]
        assert moved["Body"] == message["Body"]
