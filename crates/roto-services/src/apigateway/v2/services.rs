//! HTTP APIs' AWS service integrations: an `AWS_PROXY` integration with an
//! `IntegrationSubtype` (`SQS-SendMessage`, `EventBridge-PutEvents`, `Kinesis-PutRecord`,
//! `StepFunctions-StartExecution`, ...) calls that operation of a Roto service through the
//! dispatcher. Its `RequestParameters` (written out as parameter mapping writes values,
//! `$request.body.{path}` included) are the operation's input, fitted to its input shape
//! (a value that is JSON text, a number, a list or an object, is that JSON). The answer
//! is the operation's output as the service's JSON (SQS's wrapped in `{Op}Response` and
//! `{Op}Result`, as AWS answers those), or its error with the error's status.

use roto_core::protocol::json;
use roto_core::{AwsError, Context, Request, Value};
use serde_json::{json, Map, Value as Json};

use super::super::invoke::ApiResponse;
use super::event::Target;
use super::mapping::render_parameter;
use super::serve::internal_error;
use super::ApiGatewayV2;
use crate::sdk;

/// The subtypes AWS offers that Roto serves: subtype, service, operation.
const SUBTYPES: &[(&str, &str, &str)] = &[
    ("EventBridge-PutEvents", "events", "PutEvents"),
    ("SQS-SendMessage", "sqs", "SendMessage"),
    ("SQS-ReceiveMessage", "sqs", "ReceiveMessage"),
    ("SQS-DeleteMessage", "sqs", "DeleteMessage"),
    ("SQS-PurgeQueue", "sqs", "PurgeQueue"),
    ("Kinesis-PutRecord", "kinesis", "PutRecord"),
    (
        "StepFunctions-StartExecution",
        "stepfunctions",
        "StartExecution",
    ),
    (
        "StepFunctions-StartSyncExecution",
        "stepfunctions",
        "StartSyncExecution",
    ),
    (
        "StepFunctions-StopExecution",
        "stepfunctions",
        "StopExecution",
    ),
];

/// The operation's input as JSON, from the integration's rendered parameters: each value
/// that reads as JSON other than a string is that JSON; `Region` chooses the region and is
/// no member; PutEvents' members are its one entry's.
fn input_of(operation: &str, parameters: Map<String, Json>) -> Json {
    let members: Map<String, Json> = parameters
        .into_iter()
        .filter(|(name, _)| name != "Region")
        .collect();
    if operation == "PutEvents" {
        let bus = members.get("EventBusName").cloned();
        let mut entry = members;
        entry.remove("EventBusName");
        if let Some(bus) = bus {
            entry.insert("EventBusName".into(), bus);
        }
        return json!({ "Entries": [entry] });
    }
    Json::Object(members)
}

/// A rendered parameter value as the JSON it stands for.
fn parameter_json(text: String) -> Json {
    match serde_json::from_str::<Json>(&text) {
        Ok(value) if !value.is_string() && !value.is_null() => value,
        _ => Json::String(text),
    }
}

/// An answer of `status` with a JSON body.
fn json_answer(status: u16, body: Vec<u8>) -> ApiResponse {
    ApiResponse {
        status,
        headers: vec![("content-type".into(), "application/json".into())],
        body,
    }
}

impl ApiGatewayV2 {
    /// Runs an AWS service integration for `target`; 500 for a subtype Roto does not serve
    /// or parameters its operation cannot read.
    pub(super) async fn service_integration(
        &self,
        ctx: &Context,
        integration: &Value,
        target: &Target<'_>,
    ) -> ApiResponse {
        let subtype = integration.str("IntegrationSubtype").unwrap_or_default();
        let Some((_, service_name, operation)) = SUBTYPES.iter().find(|(s, _, _)| *s == subtype)
        else {
            return internal_error();
        };
        let Some(dispatcher) = self.env.dispatcher() else {
            return internal_error();
        };
        let Some(service) = dispatcher.service(service_name).cloned() else {
            return internal_error();
        };
        let mut parameters = Map::new();
        let mut call_ctx = ctx.clone();
        for (name, value) in integration
            .get("RequestParameters")
            .and_then(Value::as_map)
            .into_iter()
            .flatten()
        {
            let text = render_parameter(value.as_str().unwrap_or_default(), target);
            if name == "Region" {
                call_ctx.region = text.clone();
            }
            parameters.insert(name.clone(), parameter_json(text));
        }
        let model = service.spec().model();
        let Some(op) = model.operation(operation) else {
            return internal_error();
        };
        let json_input = input_of(operation, parameters);
        let outcome = async {
            let input = match op.input.as_ref() {
                Some(shape) => sdk::to_value(model, model.resolve(shape), &json_input, 0)
                    .map_err(|e| AwsError::new("ValidationException", e).with_status(400))?,
                None => Value::map(),
            };
            let response = dispatcher
                .invoke(service.as_ref(), &call_ctx, operation, Request::new(input))
                .await?;
            Ok::<_, AwsError>(json::encode(model, op, &response.output, &ctx.request_id).body)
        }
        .await;
        match outcome {
            Ok(body) if *service_name == "sqs" => {
                let result: Json = serde_json::from_slice(&body).unwrap_or_else(|_| json!({}));
                let wrapped = json!({
                    format!("{operation}Response"): {
                        format!("{operation}Result"): result,
                        "ResponseMetadata": {"RequestId": ctx.request_id},
                    }
                });
                json_answer(200, wrapped.to_string().into_bytes())
            }
            Ok(body) => json_answer(200, body.to_vec()),
            Err(error) => {
                let encoded = json::encode_error(model, &error, &ctx.request_id);
                json_answer(encoded.status.as_u16(), encoded.body.to_vec())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameters_become_the_operations_input() {
        let mut parameters = Map::new();
        parameters.insert("Detail".into(), parameter_json(r#"{"a":1}"#.into()));
        parameters.insert("Source".into(), parameter_json("app".into()));
        parameters.insert("EventBusName".into(), parameter_json("bus".into()));
        parameters.insert("Region".into(), parameter_json("eu-west-1".into()));
        assert_eq!(
            input_of("PutEvents", parameters.clone()),
            json!({"Entries": [{"Detail": {"a": 1}, "Source": "app", "EventBusName": "bus"}]})
        );
        let mut sqs = Map::new();
        sqs.insert("QueueUrl".into(), parameter_json("https://q".into()));
        sqs.insert("DelaySeconds".into(), parameter_json("5".into()));
        assert_eq!(
            input_of("SendMessage", sqs),
            json!({"QueueUrl": "https://q", "DelaySeconds": 5})
        );
        assert_eq!(parameter_json("\"quoted\"".into()), json!("\"quoted\""));
    }
}
