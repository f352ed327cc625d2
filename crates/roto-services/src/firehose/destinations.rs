//! A destination's configuration as AWS describes it, and UpdateDestination's merge.
//!
//! The stored destination is the `DestinationDescription` (less its id) as JSON: each
//! `*DestinationConfiguration` becomes its `*DestinationDescription` with AWS's defaults
//! filled in (buffering hints, compression, encryption, logging, backup mode), nested
//! `S3Configuration`s becoming `S3DestinationDescription`s. An S3 or extended S3
//! destination is described both ways, as AWS does. Secrets AWS never shows (an HTTP
//! endpoint's access key, Redshift's password) are kept apart under [`SECRETS`].

use serde_json::{json, Map, Value as Json};

use super::invalid_argument;
use super::prefix;
use roto_core::AwsResult;

/// The member of a stored destination holding what its description never shows.
pub(super) const SECRETS: &str = "Secrets";

/// The destination kinds, by the stem their members share (`ExtendedS3` in
/// `ExtendedS3DestinationConfiguration`).
const KINDS: [&str; 11] = [
    "S3",
    "ExtendedS3",
    "Redshift",
    "Elasticsearch",
    "Amazonopensearchservice",
    "Splunk",
    "HttpEndpoint",
    "AmazonOpenSearchServerless",
    "Snowflake",
    "Iceberg",
    "Kinesis",
];

/// Members of a configuration AWS keeps but never describes.
const SECRET_MEMBERS: [&str; 4] = ["Password", "PrivateKey", "KeyPassphrase", "AccessKey"];

/// The members every S3 description carries and the S3 half of an extended one.
const S3_MEMBERS: [&str; 8] = [
    "RoleARN",
    "BucketARN",
    "Prefix",
    "ErrorOutputPrefix",
    "BufferingHints",
    "CompressionFormat",
    "EncryptionConfiguration",
    "CloudWatchLoggingOptions",
];

/// The one destination a request configures (`suffix` is `DestinationConfiguration` or
/// `DestinationUpdate`): its kind and its members, else AWS's error.
pub(super) fn the_one<'a>(input: &'a Json, suffix: &str) -> AwsResult<(&'static str, &'a Json)> {
    let given: Vec<(&'static str, &Json)> = KINDS
        .iter()
        .filter_map(|k| Some((*k, input.get(format!("{k}{suffix}"))?)))
        .filter(|(_, v)| !v.is_null())
        .collect();
    match given.as_slice() {
        [one] => Ok(*one),
        _ => Err(invalid_argument(
            "Exactly one destination configuration is supported for a Firehose",
        )),
    }
}

/// The kind of a stored destination (`ExtendedS3`, `HttpEndpoint`, ...).
pub(super) fn kind_of(stored: &Json) -> &'static str {
    KINDS
        .iter()
        .rev()
        .find(|k| stored.get(format!("{k}DestinationDescription")).is_some())
        .copied()
        .unwrap_or("S3")
}

fn fill(target: &mut Map<String, Json>, key: &str, default: Json) {
    match (target.get_mut(key), default) {
        (Some(Json::Object(have)), Json::Object(defaults)) => {
            for (k, v) in defaults {
                have.entry(k).or_insert(v);
            }
        }
        (Some(_), _) => {}
        (None, default) => {
            target.insert(key.to_string(), default);
        }
    }
}

/// An S3 configuration as described, AWS's defaults filled in.
fn s3_description(config: &Json) -> Json {
    let mut out = config.as_object().cloned().unwrap_or_default();
    out.retain(|k, _| S3_MEMBERS.contains(&k.as_str()) || k == "FileExtension");
    out.remove("FileExtension");
    fill(&mut out, "BufferingHints", buffering(5, 300));
    fill(&mut out, "CompressionFormat", json!("UNCOMPRESSED"));
    fill(
        &mut out,
        "EncryptionConfiguration",
        json!({"NoEncryptionConfig": "NoEncryption"}),
    );
    fill(
        &mut out,
        "CloudWatchLoggingOptions",
        json!({"Enabled": false}),
    );
    Json::Object(out)
}

fn buffering(size: i64, interval: i64) -> Json {
    json!({"SizeInMBs": size, "IntervalInSeconds": interval})
}

/// An extended S3 configuration as described.
fn extended_description(config: &Json) -> Json {
    let mut out = config.as_object().cloned().unwrap_or_default();
    if let Some(backup) = out.remove("S3BackupConfiguration") {
        out.insert("S3BackupDescription".into(), s3_description(&backup));
    }
    for (k, v) in s3_description(config).as_object().into_iter().flatten() {
        out.insert(k.clone(), v.clone());
    }
    fill(&mut out, "S3BackupMode", json!("Disabled"));
    Json::Object(out)
}

/// Defaults of the other destinations' buffering hints, by kind.
fn default_buffering(kind: &str) -> Json {
    match kind {
        "Splunk" => buffering(5, 60),
        "Snowflake" => buffering(128, 0),
        _ => buffering(5, 300),
    }
}

/// Any other destination's configuration as described: nested S3 configurations described,
/// secrets set apart.
fn other_description(kind: &str, config: &Json) -> (Json, Map<String, Json>) {
    let mut out = config.as_object().cloned().unwrap_or_default();
    let mut secrets = Map::new();
    for name in SECRET_MEMBERS {
        if let Some(v) = out.remove(name) {
            secrets.insert(name.into(), v);
        }
    }
    if let Some(Json::Object(endpoint)) = out.get_mut("EndpointConfiguration") {
        if let Some(key) = endpoint.remove("AccessKey") {
            secrets.insert("AccessKey".into(), key);
        }
    }
    if let Some(s3) = out.remove("S3Configuration") {
        out.insert("S3DestinationDescription".into(), s3_description(&s3));
    }
    if let Some(s3) = out.remove("S3BackupConfiguration") {
        out.insert("S3BackupDescription".into(), s3_description(&s3));
    }
    if kind != "Redshift" {
        fill(&mut out, "BufferingHints", default_buffering(kind));
    }
    fill(
        &mut out,
        "CloudWatchLoggingOptions",
        json!({"Enabled": false}),
    );
    if kind == "HttpEndpoint" {
        fill(
            &mut out,
            "RequestConfiguration",
            json!({"ContentEncoding": "NONE"}),
        );
        fill(&mut out, "RetryOptions", json!({"DurationInSeconds": 300}));
        fill(&mut out, "S3BackupMode", json!("FailedDataOnly"));
    }
    (Json::Object(out), secrets)
}

/// The stored destination a create request's configuration of `kind` describes.
pub(super) fn describe(kind: &str, config: &Json) -> AwsResult<Json> {
    let mut stored = Map::new();
    match kind {
        "S3" | "ExtendedS3" => {
            check_prefixes(config)?;
            check_queries(config)?;
            stored.insert("S3DestinationDescription".into(), s3_description(config));
            stored.insert(
                "ExtendedS3DestinationDescription".into(),
                extended_description(config),
            );
        }
        _ => {
            let (description, secrets) = other_description(kind, config);
            if let Some(s3) = description.get("S3DestinationDescription") {
                check_prefixes(s3)?;
            }
            stored.insert(format!("{kind}DestinationDescription"), description);
            stored.insert(SECRETS.into(), Json::Object(secrets));
        }
    }
    Ok(Json::Object(stored))
}

/// AWS's rules for a pair of custom prefixes.
pub(super) fn check_prefixes(config: &Json) -> AwsResult<()> {
    let text = |k: &str| config.get(k).and_then(Json::as_str).unwrap_or_default();
    let (prefix, errors) = (text("Prefix"), text("ErrorOutputPrefix"));
    prefix::Template::parse(prefix).map_err(invalid_argument)?;
    prefix::Template::parse(errors).map_err(invalid_argument)?;
    if prefix::has_expressions(prefix) && errors.is_empty() {
        return Err(invalid_argument(
            "ErrorOutputPrefix cannot be null or empty when Prefix contains expressions",
        ));
    }
    Ok(())
}

/// InvalidArgumentException for a metadata extraction query that jq cannot run or that
/// [`partition`](super::partition) refuses.
fn check_queries(config: &Json) -> AwsResult<()> {
    let processors = config["ProcessingConfiguration"]["Processors"].as_array();
    for processor in processors.into_iter().flatten() {
        if processor["Type"] != "MetadataExtraction" {
            continue;
        }
        let query = super::transform::parameter(processor, "MetadataExtractionQuery");
        if let Some(query) = query {
            super::partition::Query::parse(query).map_err(|reason| {
                invalid_argument(format!(
                    "MetadataExtractionQuery {query} is not a valid partitioning query: {reason}."
                ))
            })?;
        }
    }
    Ok(())
}

/// `base` with `update`'s members laid over it, objects merged member by member.
fn merge(base: &mut Json, update: &Json) {
    match (base, update) {
        (Json::Object(have), Json::Object(new)) => {
            for (k, v) in new {
                match have.get_mut(k) {
                    Some(existing) if existing.is_object() && v.is_object() => merge(existing, v),
                    _ => {
                        have.insert(k.clone(), v.clone());
                    }
                }
            }
        }
        (base, update) => *base = update.clone(),
    }
}

/// An update's members under the names the description uses.
fn update_as_description(update: &Json) -> Json {
    let mut out = update.as_object().cloned().unwrap_or_default();
    for (from, to) in [
        ("S3Update", "S3DestinationDescription"),
        ("S3BackupUpdate", "S3BackupDescription"),
    ] {
        if let Some(v) = out.remove(from) {
            out.insert(to.into(), v);
        }
    }
    Json::Object(out)
}

/// The stored destination after an UpdateDestination of `kind` with `update`.
pub(super) fn apply_update(stored: &Json, kind: &str, update: &Json) -> AwsResult<Json> {
    let current = kind_of(stored);
    let s3_family = |k: &str| k == "S3" || k == "ExtendedS3";
    if current != kind && !(s3_family(current) && s3_family(kind)) {
        if ["HttpEndpoint", "Elasticsearch", "Amazonopensearchservice"]
            .iter()
            .any(|k| *k == kind || *k == current)
        {
            let named = if current == "HttpEndpoint" || kind == "HttpEndpoint" {
                "HttpEndpoint"
            } else {
                "Elasticsearch"
            };
            return Err(invalid_argument(format!(
                "Changing the destination type to or from {named} is not supported at this time."
            )));
        }
        return describe(kind, &update_as_description(update));
    }
    let mut next = stored.clone();
    let mut changes = update_as_description(update);
    if s3_family(kind) {
        let s3_part: Map<String, Json> = changes
            .as_object()
            .into_iter()
            .flatten()
            .filter(|(k, _)| S3_MEMBERS.contains(&k.as_str()))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let extended_only = kind == "S3";
        if let Some(s3) = next.get_mut("S3DestinationDescription") {
            merge(s3, &Json::Object(s3_part.clone()));
        }
        if let Some(extended) = next.get_mut("ExtendedS3DestinationDescription") {
            let part = if extended_only {
                &Json::Object(s3_part)
            } else {
                &changes
            };
            merge(extended, part);
        }
        if let Some(extended) = next.get("ExtendedS3DestinationDescription") {
            check_prefixes(extended)?;
            check_queries(extended)?;
        }
        return Ok(next);
    }
    let mut secrets = Map::new();
    if let Some(Json::Object(endpoint)) = changes.get_mut("EndpointConfiguration") {
        if let Some(key) = endpoint.remove("AccessKey") {
            secrets.insert("AccessKey".into(), key);
        }
    }
    if let Some(object) = changes.as_object_mut() {
        for name in SECRET_MEMBERS {
            if let Some(v) = object.remove(name) {
                secrets.insert(name.into(), v);
            }
        }
    }
    if let Some(description) = next.get_mut(format!("{kind}DestinationDescription")) {
        merge(description, &changes);
    }
    if let Some(stored_secrets) = next.get_mut(SECRETS) {
        merge(stored_secrets, &Json::Object(secrets));
    }
    Ok(next)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extended_s3_is_described_both_ways_with_defaults() {
        let stored = describe(
            "ExtendedS3",
            &json!({"RoleARN": "r", "BucketARN": "arn:aws:s3:::b", "CompressionFormat": "GZIP"}),
        )
        .unwrap();
        let s3 = &stored["S3DestinationDescription"];
        assert_eq!(s3["BufferingHints"], buffering(5, 300));
        assert_eq!(s3["CompressionFormat"], "GZIP");
        let extended = &stored["ExtendedS3DestinationDescription"];
        assert_eq!(extended["S3BackupMode"], "Disabled");
        assert_eq!(kind_of(&stored), "ExtendedS3");
    }

    #[test]
    fn updates_merge_member_by_member() {
        let stored = describe(
            "ExtendedS3",
            &json!({"RoleARN": "r", "BucketARN": "b", "BufferingHints": {"SizeInMBs": 1}}),
        )
        .unwrap();
        let next = apply_update(
            &stored,
            "ExtendedS3",
            &json!({"BufferingHints": {"IntervalInSeconds": 0}}),
        )
        .unwrap();
        assert_eq!(
            next["ExtendedS3DestinationDescription"]["BufferingHints"],
            buffering(1, 0)
        );
        assert_eq!(
            next["S3DestinationDescription"]["BufferingHints"],
            buffering(1, 0)
        );
    }

    #[test]
    fn http_endpoint_keys_are_kept_apart() {
        let stored = describe(
            "HttpEndpoint",
            &json!({"EndpointConfiguration": {"Url": "https://x", "AccessKey": "k"},
                    "S3Configuration": {"RoleARN": "r", "BucketARN": "b"}}),
        )
        .unwrap();
        assert_eq!(stored[SECRETS]["AccessKey"], "k");
        let description = &stored["HttpEndpointDestinationDescription"];
        assert!(description["EndpointConfiguration"]
            .get("AccessKey")
            .is_none());
        assert!(apply_update(&stored, "ExtendedS3", &json!({})).is_err());
    }
}
