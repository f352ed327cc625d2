//! Unit tests for SQS's pure parts: URLs, names, attribute digests.

use super::attributes::{self, AttributeValue, Kind, MessageAttribute};
use super::queues::{parse_queue_url, QueueAddress};
use super::*;

fn ctx() -> Context {
    Context {
        account: "000000000000".into(),
        region: "us-east-1".into(),
        access_key: None,
        request_id: "r".into(),
        host: "127.0.0.1:4566".into(),
    }
}

fn address(account: &str, region: &str, name: &str) -> Option<QueueAddress> {
    Some(QueueAddress {
        account: account.into(),
        region: region.into(),
        name: name.into(),
    })
}

#[test]
fn queue_urls_parse_in_every_accepted_form() {
    let c = ctx();
    assert_eq!(
        parse_queue_url("http://127.0.0.1:4566/111122223333/jobs", &c),
        address("111122223333", "us-east-1", "jobs")
    );
    assert_eq!(
        parse_queue_url(
            "http://sqs.eu-west-1.localhost:4566/000000000000/q.fifo",
            &c
        ),
        address("000000000000", "eu-west-1", "q.fifo")
    );
    assert_eq!(
        parse_queue_url("https://sqs.ap-south-1.amazonaws.com/123456789012/q", &c),
        address("123456789012", "ap-south-1", "q")
    );
    assert_eq!(
        parse_queue_url("/000000000000/q", &c),
        address("000000000000", "us-east-1", "q")
    );
    assert_eq!(parse_queue_url("http://localhost:4566/", &c), None);
    assert_eq!(parse_queue_url("http://localhost/abc/q", &c), None);
}

fn string_attribute(data_type: &str, value: &str) -> MessageAttribute {
    MessageAttribute {
        data_type: data_type.into(),
        value: AttributeValue::String(value.into()),
    }
}

#[test]
fn attribute_md5_follows_the_documented_encoding() {
    let mut attrs = attributes::Attributes::new();
    attrs.insert("b".into(), string_attribute("Number", "1"));
    attrs.insert(
        "a".into(),
        MessageAttribute {
            data_type: "Binary".into(),
            value: AttributeValue::Binary(vec![0, 1, 2]),
        },
    );
    let mut expected = Vec::new();
    for (name, ty, transport, value) in [
        ("a", "Binary", 2u8, &[0u8, 1, 2][..]),
        ("b", "Number", 1u8, b"1"),
    ] {
        for part in [name.as_bytes(), ty.as_bytes()] {
            expected.extend_from_slice(&(part.len() as u32).to_be_bytes());
            expected.extend_from_slice(part);
        }
        expected.push(transport);
        expected.extend_from_slice(&(value.len() as u32).to_be_bytes());
        expected.extend_from_slice(value);
    }
    assert_eq!(
        attributes::md5_of(&attrs),
        Some(attributes::md5_hex(&expected))
    );
    assert_eq!(attributes::md5_of(&attributes::Attributes::new()), None);
}

#[test]
fn stored_attributes_round_trip_with_binary_values() {
    let mut attrs = attributes::Attributes::new();
    attrs.insert("s".into(), string_attribute("String.custom", "x"));
    attrs.insert(
        "bin".into(),
        MessageAttribute {
            data_type: "Binary".into(),
            value: AttributeValue::Binary(vec![255, 0]),
        },
    );
    assert_eq!(attributes::from_json(&attributes::to_json(&attrs)), attrs);
}

fn parse_user(attrs: Value) -> AwsResult<attributes::Attributes> {
    attributes::parse(Some(&attrs), Kind::User)
}

#[test]
fn attribute_validation_rejects_bad_types_names_and_numbers() {
    let attr = |ty: &str, v: &str| Value::map().with("DataType", ty).with("StringValue", v);
    let err = parse_user(Value::map().with("n", attr("Number", "12a"))).unwrap_err();
    assert_eq!(err.code, "InvalidParameterValue");
    assert!(err.message.contains("to a number"), "{}", err.message);
    let err = parse_user(Value::map().with("n", attr("Strin", "x"))).unwrap_err();
    assert!(err.message.contains("supported type prefixes"));
    let err = parse_user(Value::map().with("AWS.x", attr("String", "x"))).unwrap_err();
    assert_eq!(err.code, "InvalidParameterValue");
    let err = parse_user(Value::map().with("n", attr("String", ""))).unwrap_err();
    assert!(err.message.contains("non-empty message attribute value"));
    assert!(parse_user(Value::map().with("n", attr("Number.float", "-1.5e3"))).is_ok());
    let eleven = (0..11).fold(Value::map(), |m, i| {
        m.with(format!("a{i}"), attr("String", "v"))
    });
    assert!(parse_user(eleven)
        .unwrap_err()
        .message
        .contains("exceeds the allowed maximum [10]"));
}

#[test]
fn message_characters_outside_the_xml_set_are_invalid_contents() {
    assert!(attributes::check_characters("ok\t\n\r ü 😀", "message body").is_ok());
    let err = attributes::check_characters("bad\u{1}", "message body").unwrap_err();
    assert_eq!(err.code, "InvalidMessageContents");
    assert!(err.message.contains("#x1"), "{}", err.message);
}

/// The plan SQLite chooses for `sql` over SQS's schema, one step a line.
fn plan(sql: &str) -> String {
    let store = roto_core::store::Store::open(roto_core::store::StoreMode::Ephemeral).unwrap();
    store.migrate(store::SCHEMA).unwrap();
    store
        .with(|c| {
            let mut stmt = c.prepare(&format!("EXPLAIN QUERY PLAN {sql}"))?;
            let unbound = vec![rusqlite::types::Null; stmt.parameter_count()];
            let steps: Vec<String> = stmt
                .query_map(rusqlite::params_from_iter(unbound), |r| {
                    r.get::<_, String>(3)
                })?
                .collect::<rusqlite::Result<_>>()?;
            Ok::<_, rusqlite::Error>(steps.join("\n"))
        })
        .unwrap()
}

#[test]
fn plans_seek_whatever_the_depth() {
    for sql in [
        store::visible_sql(false),
        store::visible_sql(true),
        store::PURGE_EXPIRED.to_string(),
        store::EXPIRE_DEDUP.to_string(),
    ] {
        let plan = plan(&sql);
        assert!(!plan.contains("TEMP B-TREE"), "{sql} sorts:\n{plan}");
        assert!(!plan.contains("SCAN"), "{sql} scans:\n{plan}");
    }
    assert!(plan(&store::visible_sql(false)).contains("sqs_messages_order"));
    assert!(plan(store::PURGE_EXPIRED).contains("sqs_messages_expiry"));
    assert!(plan(store::EXPIRE_DEDUP).contains("sqs_dedup_expiry"));
}
