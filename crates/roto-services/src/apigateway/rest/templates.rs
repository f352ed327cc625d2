//! Mapping templates of non-proxy integrations (VTL, through `roto-vtl`): the request
//! template chosen by the request's content type and the integration's passthrough
//! behaviour, and the response template of the integration response.
//!
//! A template sees `$input` (the body, path, query and headers), `$context` (the request
//! context, with `$context.error` where a gateway response renders), `$stageVariables` and
//! `$util`; it may override the integration request's headers and query string and the
//! method response's status and headers through `$context.requestOverride` and
//! `$context.responseOverride`, as in AWS.

use roto_vtl::{Context, Input, Template};
use serde_json::{json, Value as Json};

use super::event::Routed;
use super::serve::Refusal;

/// What a rendered template gives: its text and the overrides it set.
pub struct Rendered {
    /// The text.
    pub text: String,
    /// The context as the template left it (overrides).
    pub context: Context,
}

/// Renders `template` for `routed` with `body` as `$input.body`.
pub fn render(template: &str, routed: &Routed<'_>, body: &str) -> Result<Rendered, Refusal> {
    let failed = |_| Refusal::new("API_CONFIGURATION_ERROR", "Internal server error");
    let parsed = Template::parse(template).map_err(failed)?;
    let mut context = Context::new(Input {
        body: body.to_string(),
        path_params: routed
            .params
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect(),
        query_params: routed.req.query.clone(),
        headers: routed.header_pairs().collect(),
    });
    let mut request_context = routed.request_context();
    request_context["requestOverride"] = json!({"header": {}, "querystring": {}, "path": {}});
    request_context["responseOverride"] = json!({"header": {}});
    context.set("context", request_context);
    context.set("stageVariables", routed.stage_variables.clone());
    let text = parsed.render(&mut context).map_err(failed)?;
    Ok(Rendered { text, context })
}

/// The content type a template is chosen by (`application/json` when none was sent).
fn content_type(routed: &Routed<'_>) -> String {
    routed
        .req
        .header("content-type")
        .map(|c| {
            c.split(';')
                .next()
                .unwrap_or_default()
                .trim()
                .to_ascii_lowercase()
        })
        .filter(|c| !c.is_empty())
        .unwrap_or_else(|| "application/json".to_string())
}

/// The integration request's body: the request template for the request's content type,
/// rendered; else the body passed through, as the passthrough behaviour allows
/// (`WHEN_NO_MATCH`, `WHEN_NO_TEMPLATES`, `NEVER`: 415 Unsupported Media Type).
pub fn request_body(
    routed: &Routed<'_>,
    integration: &Json,
) -> Result<(Vec<u8>, Option<Context>), Refusal> {
    let templates = integration["requestTemplates"].as_object();
    let wanted = content_type(routed);
    let chosen = templates.and_then(|t| t.get(&wanted));
    if let Some(template) = chosen.and_then(Json::as_str) {
        let rendered = render(template, routed, &String::from_utf8_lossy(&routed.req.body))?;
        return Ok((rendered.text.into_bytes(), Some(rendered.context)));
    }
    let none_defined = templates.is_none_or(|t| t.is_empty());
    let passes = match integration["passthroughBehavior"]
        .as_str()
        .unwrap_or("WHEN_NO_MATCH")
    {
        "NEVER" => false,
        "WHEN_NO_TEMPLATES" => none_defined,
        _ => true,
    };
    if !passes {
        return Err(Refusal::new(
            "UNSUPPORTED_MEDIA_TYPE",
            "Unsupported Media Type",
        ));
    }
    Ok((routed.req.body.to_vec(), None))
}

/// The method response's body from an integration response's template for JSON (or its
/// only template); `None` when it has none, and the body passes through.
pub fn response_body(
    routed: &Routed<'_>,
    chosen: &Json,
    body: &[u8],
) -> Result<Option<Rendered>, Refusal> {
    let templates = chosen["responseTemplates"].as_object();
    let template = templates.and_then(|t| {
        t.get("application/json")
            .or_else(|| (t.len() == 1).then(|| t.values().next()).flatten())
    });
    match template.and_then(Json::as_str).filter(|t| !t.is_empty()) {
        Some(template) => render(template, routed, &String::from_utf8_lossy(body)).map(Some),
        None => Ok(None),
    }
}
