//! Tags: object tagging (GetObjectTagging, PutObjectTagging, DeleteObjectTagging, the
//! `x-amz-tagging` header) and the checks bucket tagging shares.
//!
//! A tag set is stored as a JSON list of `[key, value]` pairs, in the order given.

use roto_core::{AwsResult, Value};

use super::errors;
use super::objects::version_header;
use super::versions;
use super::{input_str, S3};

/// A tag set's pairs.
pub(crate) type Tags = Vec<(String, String)>;

/// Checks a tag set against S3's rules: at most `max` tags, keys up to 128 characters and
/// values up to 256, no duplicate keys, no `aws:` prefix.
pub(crate) fn check(tags: &Tags, max: usize, kind: &str) -> AwsResult<()> {
    if tags.len() > max {
        return Err(errors::invalid_tag(format!(
            "{kind} tags cannot be greater than {max}"
        )));
    }
    for (i, (k, v)) in tags.iter().enumerate() {
        if k.is_empty() || k.chars().count() > 128 {
            return Err(errors::invalid_tag(
                "The TagKey you have provided is invalid",
            ));
        }
        if v.chars().count() > 256 {
            return Err(errors::invalid_tag(
                "The TagValue you have provided is invalid",
            ));
        }
        if k.to_ascii_lowercase().starts_with("aws:") {
            return Err(errors::invalid_tag(
                "Your TagKey cannot be prefixed with aws:",
            ));
        }
        if tags[..i].iter().any(|(other, _)| other == k) {
            return Err(errors::invalid_tag(
                "Cannot provide multiple Tags with the same key",
            ));
        }
    }
    Ok(())
}

/// The pairs of a `TagSet` list.
pub(crate) fn from_tag_set(tag_set: Option<&Value>) -> Tags {
    tag_set
        .and_then(Value::as_list)
        .unwrap_or_default()
        .iter()
        .map(|t| {
            (
                input_str(t, "Key").to_string(),
                input_str(t, "Value").to_string(),
            )
        })
        .collect()
}

/// A `TagSet` list from pairs.
pub(crate) fn to_tag_set(tags: &Tags) -> Vec<Value> {
    tags.iter()
        .map(|(k, v)| {
            Value::map()
                .with("Key", k.as_str())
                .with("Value", v.as_str())
        })
        .collect()
}

/// The JSON column for a tag set (`None` when empty).
pub(crate) fn to_json(tags: &Tags) -> Option<String> {
    (!tags.is_empty()).then(|| serde_json::to_string(tags).unwrap_or_default())
}

/// A stored tag set.
pub(crate) fn from_json(text: Option<&str>) -> Tags {
    text.and_then(|t| serde_json::from_str(t).ok())
        .unwrap_or_default()
}

/// How many tags a stored set has.
pub(crate) fn count(text: &str) -> usize {
    from_json(Some(text)).len()
}

/// Parses an `x-amz-tagging` header (`k1=v1&k2=v2`, URL-encoded) into the stored form.
pub(crate) fn from_header(header: Option<&str>) -> AwsResult<Option<String>> {
    let Some(text) = header.filter(|t| !t.is_empty()) else {
        return Ok(None);
    };
    let tags = form_urlencoded_pairs(text).ok_or_else(|| {
        errors::invalid_argument(
            "The header 'x-amz-tagging' shall be encoded as UTF-8 then URLEncoded URL query parameters without tag name duplicates.",
            "x-amz-tagging",
            text,
        )
    })?;
    check(&tags, 10, "Object")?;
    Ok(to_json(&tags))
}

/// The pairs of a URL-encoded form, or `None` if one does not decode to UTF-8.
fn form_urlencoded_pairs(text: &str) -> Option<Tags> {
    let decode = |s: &str| {
        percent_encoding::percent_decode_str(&s.replace('+', " "))
            .decode_utf8()
            .ok()
            .map(|s| s.into_owned())
    };
    text.split('&')
        .filter(|p| !p.is_empty())
        .map(|pair| {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            Some((decode(k)?, decode(v)?))
        })
        .collect()
}

impl S3 {
    pub(crate) fn get_object_tagging(&self, input: &Value) -> AwsResult<Value> {
        let key = input_str(input, "Key");
        let bucket = self.bucket(input_str(input, "Bucket"))?;
        let row = self
            .env
            .store
            .with(|c| versions::find_object(c, &bucket.name, key, input.str("VersionId"), "GET"))?;
        Ok(Value::map()
            .with("TagSet", to_tag_set(&from_json(row.tags.as_deref())))
            .with_opt("VersionId", version_header(&bucket, &row)))
    }

    fn set_object_tags(&self, input: &Value, tags: &Tags) -> AwsResult<Value> {
        let key = input_str(input, "Key");
        let bucket = self.bucket(input_str(input, "Bucket"))?;
        let json = to_json(tags);
        let row = self.env.store.transaction(|tx| {
            versions::update_version(
                tx,
                &bucket.name,
                key,
                input.str("VersionId"),
                "PUT",
                |row| {
                    row.tags = json;
                    Ok(())
                },
            )
        })?;
        Ok(Value::map().with_opt("VersionId", version_header(&bucket, &row)))
    }

    pub(crate) fn put_object_tagging(&self, input: &Value) -> AwsResult<Value> {
        let tagging = input.get("Tagging").ok_or_else(errors::malformed_xml)?;
        let tags = from_tag_set(tagging.get("TagSet"));
        check(&tags, 10, "Object")?;
        self.set_object_tags(input, &tags)
    }

    pub(crate) fn delete_object_tagging(&self, input: &Value) -> AwsResult<Value> {
        self.set_object_tags(input, &Vec::new())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tagging_headers_decode_and_are_checked() {
        let json = from_header(Some("a=1&b%20c=x+y&empty=")).unwrap().unwrap();
        assert_eq!(
            from_json(Some(&json)),
            vec![
                ("a".to_string(), "1".to_string()),
                ("b c".into(), "x y".into()),
                ("empty".into(), String::new())
            ]
        );
        assert_eq!(from_header(Some("")).unwrap(), None);
        assert_eq!(from_header(Some("a=1&a=2")).unwrap_err().code, "InvalidTag");
        let many: Vec<String> = (0..11).map(|i| format!("k{i}=v")).collect();
        assert_eq!(
            from_header(Some(&many.join("&"))).unwrap_err().message,
            "Object tags cannot be greater than 10"
        );
        assert!(check(&vec![("aws:x".into(), "v".into())], 10, "Object").is_err());
        assert!(check(&vec![("k".repeat(129), "v".into())], 10, "Object").is_err());
    }
}
