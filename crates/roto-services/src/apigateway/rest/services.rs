//! AWS service integrations (`type: AWS` with a URI other than Lambda's): the integration
//! request reaches another Roto service through the dispatcher, read and answered by that
//! service's own codec, exactly as the same request sent to Roto's port would be.
//!
//! The URI names the service and either an action
//! (`arn:aws:apigateway:{region}:sqs:action/SendMessage`, `...:dynamodb:action/PutItem`) or
//! a path (`...:sqs:path/{account}/{queue}`, `...:s3:path/{bucket}/{key}`). Query-protocol
//! services (SNS, SQS) read the integration request's body as a form, JSON services as the
//! operation's JSON, rest services (S3) by the path and the integration's HTTP method. The
//! service's answer (or its error) is the integration's status and body, which the
//! integration response then maps; the status code is what selection patterns match.

use bytes::Bytes;
use http::{HeaderMap, HeaderValue, Method};
use http_body_util::{BodyExt, Full};
use roto_core::model::model;
use roto_core::protocol::{Protocol, WireRequest};
use roto_core::{AwsError, Context, Request};

use super::super::ApiGateway;
use super::serve::{configuration_error, Answer, Refusal};

/// What an integration URI names: the region, the service, and the action or path.
#[derive(Debug, PartialEq)]
struct Target<'u> {
    region: &'u str,
    service: &'u str,
    action: Option<&'u str>,
    path: Option<&'u str>,
}

fn target(uri: &str) -> Option<Target<'_>> {
    let rest = uri.strip_prefix("arn:aws:apigateway:")?;
    let (region, rest) = rest.split_once(':')?;
    let (service, what) = rest.split_once(':')?;
    let service = service.rsplit('.').next().unwrap_or(service);
    let (action, path) = match (what.strip_prefix("action/"), what.strip_prefix("path/")) {
        (Some(action), _) => (
            Some(action.split(['&', '?']).next().unwrap_or(action)),
            None,
        ),
        (_, Some(path)) => (None, Some(path)),
        _ => return None,
    };
    Some(Target {
        region,
        service,
        action,
        path,
    })
}

/// The Roto service (and the model its requests are read by) behind an integration's
/// service name.
fn service_and_model(name: &str) -> (&str, &'static str) {
    match name {
        "sqs" => ("sqs", "sqs-query"),
        "execute-api" => ("apigateway", "apigateway"),
        "states" => ("stepfunctions", "stepfunctions"),
        other => (other, ""),
    }
}

impl ApiGateway {
    /// Runs an AWS service integration with the integration request's `body`.
    pub(super) async fn service_action(
        &self,
        ctx: &Context,
        uri: &str,
        method: &str,
        body: &[u8],
    ) -> Result<Answer, Refusal> {
        let target = target(uri).ok_or_else(configuration_error)?;
        let dispatcher = self.env.dispatcher().ok_or_else(configuration_error)?;
        let (name, model_name) = service_and_model(target.service);
        let service = dispatcher
            .service(name)
            .cloned()
            .ok_or_else(configuration_error)?;
        let model = match model_name {
            "" => service.spec().model(),
            named => model(named),
        };
        let protocol = Protocol::of(model);
        let mut headers = HeaderMap::new();
        let mut form = String::from_utf8_lossy(body).into_owned();
        let (method, path) = match protocol {
            Protocol::Query => {
                headers.insert(
                    http::header::CONTENT_TYPE,
                    HeaderValue::from_static("application/x-www-form-urlencoded"),
                );
                if let Some(action) = target.action.filter(|_| !form.contains("Action=")) {
                    form = format!("Action={action}&{form}");
                }
                if let (Some(path), "sqs") = (target.path, name) {
                    let queue_url = format!("https://sqs.{}.amazonaws.com/{path}", target.region);
                    let encoded: String =
                        form_urlencoded::byte_serialize(queue_url.as_bytes()).collect();
                    form = format!("QueueUrl={encoded}&{form}");
                }
                (Method::POST, "/".to_string())
            }
            Protocol::Json => {
                let action = target.action.ok_or_else(configuration_error)?;
                let prefix = model.metadata.target_prefix.clone().unwrap_or_default();
                let value = HeaderValue::from_str(&format!("{prefix}.{action}"))
                    .map_err(|_| configuration_error())?;
                headers.insert("x-amz-target", value);
                (Method::POST, "/".to_string())
            }
            Protocol::RestXml | Protocol::RestJson => {
                let method =
                    Method::from_bytes(method.as_bytes()).map_err(|_| configuration_error())?;
                (method, format!("/{}", target.path.unwrap_or_default()))
            }
        };
        let body_bytes = match protocol {
            Protocol::Query => Bytes::from(form),
            _ => Bytes::copy_from_slice(body),
        };
        let (path, query) = path
            .split_once('?')
            .map_or((path.clone(), String::new()), |(p, q)| {
                (p.to_string(), q.to_string())
            });
        let wire = WireRequest {
            method: &method,
            path: &path,
            query: &query,
            headers: &headers,
            body: &body_bytes,
        };
        let mut call_ctx = ctx.clone();
        call_ctx.region = target.region.to_string();
        let outcome = async {
            let resolved = protocol.resolve(model, &wire)?;
            let input = protocol.decode(model, &resolved, &wire)?;
            let request = Request {
                input,
                body: Some(
                    Full::new(body_bytes.clone())
                        .map_err(|never| match never {})
                        .boxed(),
                ),
                headers: headers.clone(),
            };
            let response = dispatcher
                .invoke(
                    service.as_ref(),
                    &call_ctx,
                    resolved.operation.name,
                    request,
                )
                .await?;
            let encoded =
                protocol.encode(model, resolved.operation, &response.output, &ctx.request_id);
            let status = response.status.unwrap_or(encoded.status.as_u16());
            let body = match response.body {
                Some(stream) => stream
                    .collect()
                    .await
                    .map_err(AwsError::from)?
                    .to_bytes()
                    .to_vec(),
                None => encoded.body.to_vec(),
            };
            Ok::<_, AwsError>((status, body))
        }
        .await;
        let (status, body) = outcome.unwrap_or_else(|error| {
            let encoded = protocol.encode_error(model, &error, &ctx.request_id, false);
            (encoded.status.as_u16(), encoded.body.to_vec())
        });
        Ok(Answer {
            selector: status.to_string(),
            status,
            headers: Vec::new(),
            body,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uris_name_service_and_action_or_path() {
        assert_eq!(
            target("arn:aws:apigateway:us-east-1:sqs:path/000000000000/jobs"),
            Some(Target {
                region: "us-east-1",
                service: "sqs",
                action: None,
                path: Some("000000000000/jobs")
            })
        );
        assert_eq!(
            target("arn:aws:apigateway:eu-west-1:dynamodb:action/PutItem"),
            Some(Target {
                region: "eu-west-1",
                service: "dynamodb",
                action: Some("PutItem"),
                path: None
            })
        );
        assert_eq!(
            target("arn:aws:apigateway:us-east-1:mybucket.s3:path/k").map(|t| t.service),
            Some("s3")
        );
        assert!(target("arn:aws:lambda:us-east-1:0:function:f").is_none());
    }
}
