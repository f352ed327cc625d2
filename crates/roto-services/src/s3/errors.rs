//! S3's errors, with the codes, messages, statuses and extra members AWS sends.

use roto_core::AwsError;

/// `NoSuchBucket` (404) with `<BucketName>`.
pub fn no_such_bucket(bucket: &str) -> AwsError {
    AwsError::new("NoSuchBucket", "The specified bucket does not exist")
        .with_status(404)
        .with_field("BucketName", bucket)
}

/// `NoSuchKey` (404) with `<Key>`.
pub fn no_such_key(key: &str) -> AwsError {
    AwsError::new("NoSuchKey", "The specified key does not exist.")
        .with_status(404)
        .with_field("Key", key)
}

/// `InvalidBucketName` (400).
pub fn invalid_bucket_name(bucket: &str) -> AwsError {
    AwsError::new("InvalidBucketName", "The specified bucket is not valid.")
        .with_status(400)
        .with_field("BucketName", bucket)
}

/// `BucketAlreadyOwnedByYou` (409).
pub fn bucket_already_owned(bucket: &str) -> AwsError {
    AwsError::new(
        "BucketAlreadyOwnedByYou",
        "Your previous request to create the named bucket succeeded and you already own it.",
    )
    .with_status(409)
    .with_field("BucketName", bucket)
}

/// `BucketAlreadyExists` (409): the name belongs to another account.
pub fn bucket_already_exists(bucket: &str) -> AwsError {
    AwsError::new(
        "BucketAlreadyExists",
        "The requested bucket name is not available. The bucket namespace is shared by all users of the system. Please select a different name and try again.",
    )
    .with_status(409)
    .with_field("BucketName", bucket)
}

/// `BucketNotEmpty` (409).
pub fn bucket_not_empty(bucket: &str) -> AwsError {
    AwsError::new(
        "BucketNotEmpty",
        "The bucket you tried to delete is not empty",
    )
    .with_status(409)
    .with_field("BucketName", bucket)
}

/// `InvalidLocationConstraint` (400): a constraint that names no region, or `us-east-1`.
pub fn invalid_location_constraint(constraint: &str) -> AwsError {
    AwsError::new(
        "InvalidLocationConstraint",
        "The specified location-constraint is not valid",
    )
    .with_status(400)
    .with_field("LocationConstraint", constraint)
}

/// `IllegalLocationConstraintException` (400): the constraint disagrees with the endpoint.
pub fn illegal_location_constraint(constraint: Option<&str>) -> AwsError {
    let which = constraint.unwrap_or("unspecified");
    AwsError::new(
        "IllegalLocationConstraintException",
        format!(
            "The {which} location constraint is incompatible for the region specific endpoint this request was sent to."
        ),
    )
    .with_status(400)
}

/// `InvalidArgument` (400) naming the argument and its value.
pub fn invalid_argument(message: &str, name: &str, value: &str) -> AwsError {
    AwsError::new("InvalidArgument", message)
        .with_status(400)
        .with_field("ArgumentName", name)
        .with_field("ArgumentValue", value)
}

/// `InvalidRequest` (400).
pub fn invalid_request(message: impl Into<String>) -> AwsError {
    AwsError::new("InvalidRequest", message).with_status(400)
}

/// `InvalidRequest` (400) for an operation sent without `Content-MD5` or a checksum.
pub fn missing_content_md5() -> AwsError {
    invalid_request("Missing required header for this request: Content-MD5")
}

/// `InvalidDigest` (400): a `Content-MD5` that is not base64 of 16 bytes.
pub fn invalid_digest(content_md5: &str) -> AwsError {
    AwsError::new(
        "InvalidDigest",
        "The Content-MD5 you specified was not valid.",
    )
    .with_status(400)
    .with_field("Content-MD5", content_md5)
}

/// `BadDigest` (400): the body's MD5 differs from `Content-MD5`.
pub fn bad_md5(expected: &str, calculated: &str) -> AwsError {
    AwsError::new(
        "BadDigest",
        "The Content-MD5 you specified did not match what we received.",
    )
    .with_status(400)
    .with_field("ExpectedDigest", expected)
    .with_field("CalculatedDigest", calculated)
}

/// `BadDigest` (400): the body's checksum differs from the `x-amz-checksum-*` value.
pub fn bad_checksum(algorithm: &str) -> AwsError {
    AwsError::new(
        "BadDigest",
        format!("The {algorithm} you specified did not match the calculated checksum."),
    )
    .with_status(400)
}

/// `IncompleteBody` (400): fewer (or more) bytes than declared.
pub fn incomplete_body() -> AwsError {
    AwsError::new(
        "IncompleteBody",
        "You did not provide the number of bytes specified by the Content-Length HTTP header",
    )
    .with_status(400)
}

/// `MalformedTrailerError` (400): an `aws-chunked` trailer section that does not parse.
pub fn malformed_trailer() -> AwsError {
    AwsError::new(
        "MalformedTrailerError",
        "The request contained trailing data that was not well-formed or did not conform to our published schema.",
    )
    .with_status(400)
}

/// `NoSuchVersion` (404).
pub fn no_such_version(key: &str, version: &str) -> AwsError {
    AwsError::new("NoSuchVersion", "The specified version does not exist.")
        .with_status(404)
        .with_field("Key", key)
        .with_field("VersionId", version)
}

/// `InvalidArgument` (400) for a version id that cannot be one.
pub fn invalid_version_id(version: &str) -> AwsError {
    invalid_argument("Invalid version id specified", "versionId", version)
}

/// `MethodNotAllowed` (405) on a delete marker, with the headers AWS sends.
pub fn delete_marker_method(row: &super::versions::ObjectRow, method: &str) -> AwsError {
    AwsError::new(
        "MethodNotAllowed",
        "The specified method is not allowed against this resource.",
    )
    .with_status(405)
    .with_field("Method", method)
    .with_field("ResourceType", "DeleteMarker")
    .with_header("x-amz-delete-marker", "true")
    .with_header("x-amz-version-id", row.version_label())
    .with_header(
        "Last-Modified",
        roto_core::timestamp::format(
            row.last_modified,
            roto_core::timestamp::TimestampFormat::Rfc822,
        ),
    )
}

/// `PreconditionFailed` (412) naming the condition that did not hold.
pub fn precondition_failed(condition: &str) -> AwsError {
    AwsError::new(
        "PreconditionFailed",
        "At least one of the pre-conditions you specified did not hold",
    )
    .with_status(412)
    .with_field("Condition", condition)
}

/// `InvalidRange` (416).
pub fn invalid_range(requested: &str, size: i64) -> AwsError {
    AwsError::new("InvalidRange", "The requested range is not satisfiable")
        .with_status(416)
        .with_field("RangeRequested", requested)
        .with_field("ActualObjectSize", size.to_string())
        .with_header("Content-Range", format!("bytes */{size}"))
}

/// `EntityTooLarge` (400): an upload over the size allowed.
pub fn entity_too_large(proposed: impl ToString, max: impl ToString) -> AwsError {
    AwsError::new(
        "EntityTooLarge",
        "Your proposed upload exceeds the maximum allowed size",
    )
    .with_status(400)
    .with_field("ProposedSize", proposed.to_string())
    .with_field("MaxSizeAllowed", max.to_string())
}

/// `MetadataTooLarge` (400): user metadata over the size allowed.
pub fn metadata_too_large(size: usize, max: usize) -> AwsError {
    AwsError::new(
        "MetadataTooLarge",
        "Your metadata headers exceed the maximum allowed metadata size.",
    )
    .with_status(400)
    .with_field("Size", size.to_string())
    .with_field("MaxSizeAllowed", max.to_string())
}

/// `NotImplemented` (501) for a header whose functionality S3 does not offer.
pub fn header_not_implemented(header: &str) -> AwsError {
    AwsError::new(
        "NotImplemented",
        "A header you provided implies functionality that is not implemented",
    )
    .with_status(501)
    .with_field("Header", header)
}

/// `NoSuchUpload` (404).
pub fn no_such_upload(upload_id: &str) -> AwsError {
    AwsError::new(
        "NoSuchUpload",
        "The specified upload does not exist. The upload ID may be invalid, or the upload may have been aborted or completed.",
    )
    .with_status(404)
    .with_field("UploadId", upload_id)
}

/// `MalformedXML` (400).
pub fn malformed_xml() -> AwsError {
    AwsError::new(
        "MalformedXML",
        "The XML you provided was not well-formed or did not validate against our published schema",
    )
    .with_status(400)
}

/// `InvalidStorageClass` (400).
pub fn invalid_storage_class(class: &str) -> AwsError {
    AwsError::new(
        "InvalidStorageClass",
        "The storage class you specified is not valid",
    )
    .with_status(400)
    .with_field("StorageClassRequested", class)
}

/// `InvalidTag` (400).
pub fn invalid_tag(message: impl Into<String>) -> AwsError {
    AwsError::new("InvalidTag", message).with_status(400)
}
