"""The latency --enforce-iam adds: two servers side by side, one with the flag, requests sent
to each in turn over one keep-alive connection each (so that load on the machine falls on
both alike), p50 of STS GetCallerIdentity, S3 GET of 1 KiB and DynamoDB GetItem, signed by
the account's root (`test`) and by an IAM user whose inline policy allows the calls.

    ROTO_BINARY=target/release/roto-server python scripts/access-latency.py [REQUESTS]
"""
import http.client, json, statistics, sys, time
sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parent.parent / "tests"))
from roto_server import RotoServer
import boto3
from botocore.config import Config

def auth(key, service):
    return f"AWS4-HMAC-SHA256 Credential={key}/20260101/us-east-1/{service}/aws4_request, SignedHeaders=host, Signature=" + "0"*64

def seed(s):
    c = lambda svc: boto3.client(svc, endpoint_url=s.endpoint, region_name="us-east-1", aws_access_key_id="test", aws_secret_access_key="test", config=Config(retries={"max_attempts":1}))
    c("s3").create_bucket(Bucket="bench"); c("s3").put_object(Bucket="bench", Key="k", Body=b"x"*1024)
    c("dynamodb").create_table(TableName="tbl", KeySchema=[{"AttributeName":"k","KeyType":"HASH"}], AttributeDefinitions=[{"AttributeName":"k","AttributeType":"S"}], BillingMode="PAY_PER_REQUEST")
    c("dynamodb").put_item(TableName="tbl", Item={"k":{"S":"1"},"v":{"S":"x"}})
    iam = c("iam"); iam.create_user(UserName="u")
    iam.put_user_policy(UserName="u", PolicyName="p", PolicyDocument=json.dumps({"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":["s3:GetObject","dynamodb:GetItem"],"Resource":"*"}]}))
    return iam.create_access_key(UserName="u")["AccessKey"]["AccessKeyId"]

def conn_of(s):
    host, port = s.endpoint.split("//")[1].split(":")
    return http.client.HTTPConnection(host, int(port))

def once(conn, method, path, body, headers):
    t = time.perf_counter()
    conn.request(method, path, body=body, headers=headers)
    r = conn.getresponse(); r.read()
    assert r.status == 200, (r.status, path)
    return time.perf_counter() - t

N = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
with RotoServer("--ephemeral") as a, RotoServer("--ephemeral", "--enforce-iam") as b:
    keys = (seed(a), seed(b))
    ca, cb = conn_of(a), conn_of(b)
    for who in ("root", "user"):
        for name, method, path, body, hdr, svc in (
            ("STS GetCallerIdentity", "POST", "/", "Action=GetCallerIdentity&Version=2011-06-15", {"Content-Type": "application/x-www-form-urlencoded"}, "sts"),
            ("S3 GET 1 KiB", "GET", "/bench/k", None, {"x-amz-content-sha256": "UNSIGNED-PAYLOAD"}, "s3"),
            ("DynamoDB GetItem", "POST", "/", json.dumps({"TableName":"tbl","Key":{"k":{"S":"1"}}}), {"Content-Type": "application/x-amz-json-1.0", "X-Amz-Target": "DynamoDB_20120810.GetItem"}, "dynamodb")):
            ta, tb = [], []
            for i in range(N + 100):
                ha = dict(hdr, Authorization=auth("test" if who == "root" else keys[0], svc))
                hb = dict(hdr, Authorization=auth("test" if who == "root" else keys[1], svc))
                x = once(ca, method, path, body, ha); y = once(cb, method, path, body, hb)
                if i >= 100: ta.append(x); tb.append(y)
            ma, mb = statistics.median(ta)*1000, statistics.median(tb)*1000
            print(f"{name:22s} {who:4s}  without {ma:.3f} ms  with {mb:.3f} ms  (+{mb-ma:.3f} ms)")
