//! Tags in the form most services' APIs carry them, a list of `{Key, Value}` structures,
//! kept in the store as one JSON object per resource (key to value, so a key appears once
//! and a later value replaces an earlier one, as TagResource does in AWS).

use roto_core::Value;
use serde_json::{Map, Value as Json};

/// A resource's tags, by key.
pub type Tags = Map<String, Json>;

/// The tags a request's list member (`Tags`, `tags`) carries.
pub fn from_input(input: &Value, member: &str) -> Tags {
    input
        .get(member)
        .and_then(Value::as_list)
        .unwrap_or(&[])
        .iter()
        .filter_map(|t| Some((t.str("Key")?.to_string(), Json::from(t.str("Value")?))))
        .collect()
}

/// Removes the keys a request's list of strings (`TagKeys`, `tagKeys`) names.
pub fn remove(tags: &mut Tags, input: &Value, member: &str) {
    for key in input.get(member).and_then(Value::as_list).unwrap_or(&[]) {
        tags.remove(key.as_str().unwrap_or_default());
    }
}

/// The tags as the API's list of `{Key, Value}`, in key order.
pub fn to_list(tags: &Tags) -> Value {
    Value::List(
        tags.iter()
            .map(|(k, v)| {
                Value::map()
                    .with("Key", k.as_str())
                    .with("Value", v.as_str().unwrap_or_default())
            })
            .collect(),
    )
}

/// Reads tags stored by [`store_text`]; a damaged column reads as no tags.
pub fn from_stored(text: &str) -> Tags {
    serde_json::from_str(text).unwrap_or_default()
}

/// The tags as the text a store column keeps.
pub fn store_text(tags: &Tags) -> String {
    Json::Object(tags.clone()).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tag(k: &str, v: &str) -> Value {
        Value::map().with("Key", k).with("Value", v)
    }

    #[test]
    fn later_values_replace_earlier_ones_and_keys_come_out_in_order() {
        let input = Value::map().with(
            "tags",
            Value::List(vec![tag("b", "1"), tag("a", "2"), tag("b", "3")]),
        );
        let mut tags = from_input(&input, "tags");
        assert_eq!(
            to_list(&tags),
            Value::List(vec![tag("a", "2"), tag("b", "3")])
        );
        remove(
            &mut tags,
            &Value::map().with("tagKeys", Value::List(vec!["a".into()])),
            "tagKeys",
        );
        assert_eq!(from_stored(&store_text(&tags)), tags);
    }
}
