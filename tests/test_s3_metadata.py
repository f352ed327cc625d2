"""S3 attribute-based access control (PutBucketAbac/GetBucketAbac) and S3 Metadata on buckets
without it, as S3 answers them."""

from __future__ import annotations

import pytest
from botocore.exceptions import ClientError


@pytest.fixture
def s3(client):
    s3 = client("s3")
    s3.create_bucket(Bucket="bucket")
    return s3


def error_of(excinfo) -> tuple[str, str]:
    err = excinfo.value.response["Error"]
    return err["Code"], err["Message"]


def test_abac_is_disabled_until_put(s3):
    assert s3.get_bucket_abac(Bucket="bucket")["AbacStatus"] == {"Status": "Disabled"}
    s3.put_bucket_abac(Bucket="bucket", AbacStatus={"Status": "Enabled"})
    assert s3.get_bucket_abac(Bucket="bucket")["AbacStatus"] == {"Status": "Enabled"}
    with pytest.raises(ClientError) as e:
        s3.get_bucket_abac(Bucket="missing")
    assert error_of(e)[0] == "NoSuchBucket"


@pytest.mark.parametrize("operation", [
    "get_bucket_metadata_configuration",
    "delete_bucket_metadata_configuration",
    "get_bucket_metadata_table_configuration",
    "delete_bucket_metadata_table_configuration",
])
def test_metadata_configuration_is_not_found(s3, operation):
    with pytest.raises(ClientError) as e:
        getattr(s3, operation)(Bucket="bucket")
    assert error_of(e) == ("MetadataConfigurationNotFound", "The metadata table configuration does not exist.")
    assert e.value.response["ResponseMetadata"]["HTTPStatusCode"] == 404
    with pytest.raises(ClientError) as e:
        getattr(s3, operation)(Bucket="missing")
    assert error_of(e)[0] == "NoSuchBucket"
