#!/usr/bin/env python3
"""Trim botocore's service models into the compact JSON that roto-core embeds.

Usage: scripts/trim-models.py PATH_TO_BOTOCORE_DATA OUT_DIR [PATH_TO_BOTOCORE_1.31.60_DATA]

Keeps every operation and shape with the traits the codecs read (protocol metadata,
http bindings, locations, xml/query names, timestamp formats, error codes) and drops
documentation, examples and deprecation text, which are most of each file's size.

SQS moved from the query protocol to JSON in botocore 1.31.x and its current model lost the
query traits (flattened names such as `Attribute.1.Name`, the `AWS.SimpleQueueService.*`
error codes). The optional third argument is botocore 1.31.60's data directory, the last
with the query model; it is written as `sqs-query.json` for the query codec.
"""
import gzip
import json
import pathlib
import sys

SERVICES = {
    "sts": "sts", "s3": "s3", "dynamodb": "dynamodb", "dynamodbstreams": "dynamodbstreams",
    "sqs": "sqs", "sns": "sns", "lambda": "lambda", "logs": "logs", "events": "events",
    "secretsmanager": "secretsmanager", "ssm": "ssm", "kms": "kms", "iam": "iam",
    "apigateway": "apigateway", "apigatewayv2": "apigatewayv2",
    "stepfunctions": "stepfunctions", "kinesis": "kinesis", "firehose": "firehose",
    "scheduler": "scheduler",
    "cloudwatch": "cloudwatch",
    "cloudformation": "cloudformation",
    "ecr": "ecr",
}
# Models that list several protocols (`metadata.protocols`) are served in each the codecs
# speak; `protocol` names the one a request without a query body is read in. The SDKs pick
# the first of their own priority order (botocore: json, then cbor, then query).
PROTOCOL = {"cloudwatch": "json"}
DROP = {"documentation", "documentationUrl", "examples", "deprecatedMessage", "box",
        "wrapper", "sensitive", "endpointdiscovery", "endpointoperation", "authtype",
        "auth", "httpChecksum", "staticContextParams", "contextParam", "unsignedPayloadOperation",
        "requestcompression", "alias", "operationContextParams"}

# botocore drops Smithy's @xmlName on S3's output structures, but S3 names the root element
# of a response body after it (the SDKs ignore the name; raw clients do not). The rest-xml
# codec names the root after a shape's locationName, so these are restored.
XML_ROOTS = {"s3": {
    "ListObjectsOutput": "ListBucketResult", "ListObjectsV2Output": "ListBucketResult",
    "ListBucketsOutput": "ListAllMyBucketsResult", "ListObjectVersionsOutput": "ListVersionsResult",
    "CreateMultipartUploadOutput": "InitiateMultipartUploadResult",
    "CompleteMultipartUploadOutput": "CompleteMultipartUploadResult",
    "ListMultipartUploadsOutput": "ListMultipartUploadsResult", "ListPartsOutput": "ListPartsResult",
    "DeleteObjectsOutput": "DeleteResult", "GetBucketTaggingOutput": "Tagging",
    "GetObjectTaggingOutput": "Tagging", "GetBucketVersioningOutput": "VersioningConfiguration",
    "GetBucketCorsOutput": "CORSConfiguration", "GetBucketAclOutput": "AccessControlPolicy",
    "GetObjectAclOutput": "AccessControlPolicy", "GetBucketLocationOutput": "LocationConstraint",
    "GetBucketLifecycleConfigurationOutput": "LifecycleConfiguration",
    "GetBucketWebsiteOutput": "WebsiteConfiguration", "GetBucketLoggingOutput": "BucketLoggingStatus",
    "GetBucketRequestPaymentOutput": "RequestPaymentConfiguration",
    "GetBucketAccelerateConfigurationOutput": "AccelerateConfiguration",
    "GetObjectAttributesOutput": "GetObjectAttributesResponse",
    "ListDirectoryBucketsOutput": "ListAllMyDirectoryBucketsResult",
}}


def trim(node):
    if isinstance(node, dict):
        return {k: trim(v) for k, v in node.items() if k not in DROP}
    if isinstance(node, list):
        return [trim(v) for v in node]
    return node


def main():
    data, out = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
    out.mkdir(parents=True, exist_ok=True)
    for name, folder in SERVICES.items():
        versions = sorted((data / folder).iterdir())
        model = json.load(gzip.open(versions[-1] / "service-2.json.gz"))
        model.pop("documentation", None)
        trimmed = trim(model)
        if name in PROTOCOL:
            trimmed["metadata"]["protocol"] = PROTOCOL[name]
        for shape, root in XML_ROOTS.get(name, {}).items():
            trimmed["shapes"][shape]["locationName"] = root
        (out / f"{name}.json").write_text(json.dumps(trimmed, separators=(",", ":")))
    if len(sys.argv) > 3:
        legacy = pathlib.Path(sys.argv[3]) / "sqs" / "2012-11-05" / "service-2.json"
        model = json.load(open(legacy))
        model.pop("documentation", None)
        (out / "sqs-query.json").write_text(json.dumps(trim(model), separators=(",", ":")))


if __name__ == "__main__":
    main()
