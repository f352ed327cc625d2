import json
import os


def handler(event, context):
    return {"statusCode": 200, "body": json.dumps({
        "path": event.get("path") or event.get("rawPath"), "table": os.environ["TABLE"]})}
