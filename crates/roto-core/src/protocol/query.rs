//! The AWS query protocol: form parameters in, XML out.
//!
//! Parameters are flattened paths (`Attribute.1.Name`, `Tags.member.2.Key`) built by the
//! same rules botocore's query serializer applies to the input shape; responses are
//! `<{Op}Response><{Op}Result>...</{Op}Result><ResponseMetadata/>` and errors are
//! `<ErrorResponse><Error><Type/><Code/><Message/></Error><RequestId/></ErrorResponse>`.

use std::borrow::Cow;
use std::collections::BTreeMap;

use crate::error::{AwsError, AwsResult};
use crate::model::{Model, Operation, Shape, ShapeKind, ShapeRef};
use crate::protocol::xml::{read_scalar, XmlWriter};
use crate::protocol::{error_status, query_error_code, Resolved, WireRequest, WireResponse};
use crate::value::Value;

/// The request's parameters: the URL query string, then a form-encoded body.
pub fn params(req: &WireRequest<'_>) -> BTreeMap<String, String> {
    pairs(req)
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect()
}

/// The query string's pairs, then the form body's: a later pair overrides an earlier one
/// of the same name.
fn pairs<'r>(req: &WireRequest<'r>) -> impl Iterator<Item = (Cow<'r, str>, Cow<'r, str>)> {
    let is_form = req
        .header("content-type")
        .is_none_or(|ct| ct.starts_with("application/x-www-form-urlencoded"));
    let body: &[u8] = if is_form { req.body } else { b"" };
    form_urlencoded::parse(req.query.as_bytes()).chain(form_urlencoded::parse(body))
}

/// Whether a request looks like a query-protocol call (an `Action` parameter).
pub fn has_action(req: &WireRequest<'_>) -> bool {
    params(req).contains_key("Action")
}

/// Resolves the operation from the `Action` parameter.
pub fn resolve<'m>(model: &'m Model, req: &WireRequest<'_>) -> AwsResult<Resolved<'m>> {
    // Only the last `Action` matters here: no map of every parameter.
    let action = pairs(req)
        .filter(|(k, _)| k == "Action")
        .last()
        .map(|(_, v)| v)
        .unwrap_or_default();
    if action.is_empty() {
        return Err(AwsError::new(
            "MissingAction",
            "Could not find operation to perform: the Action parameter is missing.",
        )
        .with_status(400));
    }
    model
        .operation(&action)
        .map(|operation| Resolved {
            operation,
            labels: Vec::new(),
        })
        .ok_or_else(|| {
            AwsError::new(
                "InvalidAction",
                format!("The action {action} is not valid for this web service."),
            )
            .with_status(400)
        })
}

/// Decodes the parameters into the operation's input shape.
pub fn decode(model: &Model, op: &Operation, req: &WireRequest<'_>) -> AwsResult<Value> {
    let params = params(req);
    match &op.input {
        Some(input) => {
            let shape = model.resolve(input);
            Ok(decode_structure(model, shape, "", &params)?.unwrap_or_else(Value::map))
        }
        None => Ok(Value::map()),
    }
}

fn join(prefix: &str, name: &str) -> String {
    if prefix.is_empty() {
        name.to_string()
    } else {
        format!("{prefix}.{name}")
    }
}

/// Whether any parameter is `key` itself or lies below `key.`.
fn present(params: &BTreeMap<String, String>, key: &str) -> bool {
    if params.contains_key(key) {
        return true;
    }
    let below = format!("{key}.");
    params
        .range(below.clone()..)
        .next()
        .is_some_and(|(k, _)| k.starts_with(&below))
}

fn decode_structure(
    model: &Model,
    shape: &Shape,
    prefix: &str,
    params: &BTreeMap<String, String>,
) -> AwsResult<Option<Value>> {
    let mut out = BTreeMap::new();
    for (name, member) in shape.members.iter() {
        let wire = member.query_name.or(member.location_name).unwrap_or(name);
        let key = join(prefix, wire);
        if let Some(v) = decode_member(model, member, &key, params)? {
            out.insert(name.to_string(), v);
        }
    }
    Ok(if out.is_empty() && !prefix.is_empty() {
        None
    } else {
        Some(Value::Map(out))
    })
}

fn decode_member(
    model: &Model,
    r: &ShapeRef,
    key: &str,
    params: &BTreeMap<String, String>,
) -> AwsResult<Option<Value>> {
    let shape = model.resolve(r);
    let flattened = r.flattened || shape.flattened;
    match shape.kind {
        ShapeKind::Structure => {
            if !present(params, key) {
                return Ok(None);
            }
            decode_structure(model, shape, key, params)
        }
        ShapeKind::List => {
            let member = shape.member.as_deref().expect("list shape has a member");
            let list_prefix = if flattened {
                match &member.location_name {
                    Some(n) => match key.rsplit_once('.') {
                        Some((parent, _)) => format!("{parent}.{n}"),
                        None => n.to_string(),
                    },
                    None => key.to_string(),
                }
            } else {
                format!("{key}.{}", member.location_name.unwrap_or("member"))
            };
            if !present(params, key) && !present(params, &list_prefix) {
                return Ok(None);
            }
            let mut items = Vec::new();
            for i in 1.. {
                let item_key = format!("{list_prefix}.{i}");
                match decode_member(model, member, &item_key, params)? {
                    Some(v) => items.push(v),
                    None => break,
                }
            }
            Ok(Some(Value::List(items)))
        }
        ShapeKind::Map => {
            if !present(params, key) {
                return Ok(None);
            }
            let key_ref = shape.key.as_deref().expect("map shape has a key");
            let val_ref = shape.value.as_deref().expect("map shape has a value");
            let key_name = key_ref.location_name.unwrap_or("key");
            let val_name = val_ref.location_name.unwrap_or("value");
            let base = if flattened {
                key.to_string()
            } else {
                format!("{key}.entry")
            };
            let mut map = BTreeMap::new();
            for i in 1.. {
                let Some(k) = params.get(&format!("{base}.{i}.{key_name}")) else {
                    break;
                };
                if let Some(v) =
                    decode_member(model, val_ref, &format!("{base}.{i}.{val_name}"), params)?
                {
                    map.insert(k.clone(), v);
                }
            }
            Ok(Some(Value::Map(map)))
        }
        _ => match params.get(key) {
            Some(text) => read_scalar(shape, r, text).map(Some).map_err(|_| {
                AwsError::new(
                    "InvalidParameterValue",
                    format!("Value ({text}) for parameter {key} is invalid."),
                )
                .with_status(400)
            }),
            None => Ok(None),
        },
    }
}

/// The namespace of a query service's responses.
fn namespace(model: &Model) -> String {
    model.metadata.xml_namespace.clone().unwrap_or_else(|| {
        format!(
            "http://{}.amazonaws.com/doc/{}/",
            model.metadata.endpoint_prefix, model.metadata.api_version
        )
    })
}

/// Encodes `<{Op}Response>` with the result wrapper and the request id.
pub fn encode(model: &Model, op: &Operation, output: &Value, request_id: &str) -> WireResponse {
    let ns = namespace(model);
    let root = format!("{}Response", op.name);
    let mut w = XmlWriter::with_declaration();
    w.start(&root, &[("xmlns", &ns)]);
    if let Some(out) = &op.output {
        let wrapper = out
            .result_wrapper
            .map(str::to_string)
            .unwrap_or_else(|| format!("{}Result", op.name));
        w.start(&wrapper, &[]);
        w.members(model, model.resolve(out), output);
        w.end(&wrapper);
    }
    w.start("ResponseMetadata", &[]);
    w.element("RequestId", request_id);
    w.end("ResponseMetadata");
    w.end(&root);
    let mut resp = WireResponse::new(200, "text/xml", w.finish());
    resp.header("x-amzn-RequestId", request_id);
    resp
}

/// Encodes `<ErrorResponse>`.
pub fn encode_error(model: &Model, error: &AwsError, request_id: &str) -> WireResponse {
    let mut w = XmlWriter::with_declaration();
    w.start("ErrorResponse", &[("xmlns", &namespace(model))]);
    w.start("Error", &[]);
    w.element(
        "Type",
        if error.sender_fault {
            "Sender"
        } else {
            "Receiver"
        },
    );
    w.element("Code", query_error_code(model, error));
    w.element("Message", &error.message);
    if let Value::Map(fields) = &error.fields {
        for (k, v) in fields {
            if let Some(text) = v.as_str() {
                w.element(k, text);
            }
        }
    }
    w.end("Error");
    w.element("RequestId", request_id);
    w.end("ErrorResponse");
    let mut resp = WireResponse::new(error_status(model, error), "text/xml", w.finish());
    resp.header("x-amzn-RequestId", request_id);
    resp
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::model;
    use http::{HeaderMap, Method};

    fn request<'a>(headers: &'a HeaderMap, body: &'a [u8]) -> WireRequest<'a> {
        WireRequest {
            method: &Method::POST,
            path: "/",
            query: "",
            headers,
            body,
        }
    }

    #[test]
    fn decodes_flattened_maps_lists_and_scalars_by_the_sqs_model() {
        let m = model("sqs-query");
        let headers = HeaderMap::new();
        let body = b"Action=SendMessage&QueueUrl=http%3A%2F%2Fx%2F1%2Fq&MessageBody=hi+there&DelaySeconds=5\
&MessageAttribute.1.Name=color&MessageAttribute.1.Value.DataType=String&MessageAttribute.1.Value.StringValue=red";
        let req = request(&headers, body);
        let resolved = resolve(m, &req).unwrap();
        assert_eq!(resolved.operation.name, "SendMessage");
        let v = decode(m, resolved.operation, &req).unwrap();
        assert_eq!(v.str("MessageBody"), Some("hi there"));
        assert_eq!(v.int("DelaySeconds"), Some(5));
        let attr = v
            .get("MessageAttributes")
            .and_then(|a| a.get("color"))
            .unwrap();
        assert_eq!(attr.str("StringValue"), Some("red"));
    }

    #[test]
    fn decodes_flattened_lists_named_by_their_member() {
        let m = model("sqs-query");
        let headers = HeaderMap::new();
        let body = b"Action=ReceiveMessage&QueueUrl=u&AttributeName.1=All&AttributeName.2=SenderId";
        let req = request(&headers, body);
        let v = decode(m, resolve(m, &req).unwrap().operation, &req).unwrap();
        assert_eq!(
            v.get("AttributeNames"),
            Some(&Value::List(vec!["All".into(), "SenderId".into()]))
        );
    }

    #[test]
    fn unknown_and_missing_actions_are_rejected() {
        let m = model("sts");
        let headers = HeaderMap::new();
        let err = resolve(m, &request(&headers, b"Action=Nope")).unwrap_err();
        assert_eq!(err.code, "InvalidAction");
        let err = resolve(m, &request(&headers, b"Version=2011-06-15")).unwrap_err();
        assert_eq!(err.code, "MissingAction");
    }

    #[test]
    fn bad_scalars_are_invalid_parameter_values() {
        let m = model("sqs-query");
        let headers = HeaderMap::new();
        let body = b"Action=SendMessage&QueueUrl=u&MessageBody=x&DelaySeconds=soon";
        let req = request(&headers, body);
        let err = decode(m, resolve(m, &req).unwrap().operation, &req).unwrap_err();
        assert_eq!(err.code, "InvalidParameterValue");
    }

    #[test]
    fn encodes_result_wrapper_and_model_error_codes() {
        let m = model("sts");
        let op = m.operation("GetCallerIdentity").unwrap();
        let out = Value::map().with("Account", "000000000000");
        let resp = encode(m, op, &out, "rid");
        let body = String::from_utf8(resp.body.to_vec()).unwrap();
        assert!(body.contains("<GetCallerIdentityResponse xmlns=\"https://sts.amazonaws.com/doc/2011-06-15/\"><GetCallerIdentityResult><Account>000000000000</Account></GetCallerIdentityResult>"), "{body}");
        let err = AwsError::new("MalformedPolicyDocumentException", "bad");
        let resp = encode_error(m, &err, "rid");
        let body = String::from_utf8(resp.body.to_vec()).unwrap();
        assert!(
            body.contains("<Code>MalformedPolicyDocument</Code>"),
            "{body}"
        );
        assert_eq!(resp.status, 400);
    }
}
