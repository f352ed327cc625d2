//! The Rust primitives behind the `aws` table: name checks, the call itself, and where in
//! the script a call was made.
//!
//! Services are looked up from the dispatcher, never from a list here, so a service added
//! to `roto_services::all` is reachable from Lua at once. Each primitive returns
//! `true, result` or `false, problem` (see `prelude.lua`), which the prelude raises at the
//! script's line.

use std::sync::Arc;

use http_body_util::BodyExt;
use mlua::{Function, Lua, MultiValue, Value as LuaValue};
use roto_core::dispatch::Request;
use roto_core::error::AwsError;
use roto_core::model::Model;
use roto_core::protocol::error_status;
use roto_core::value::Value;
use roto_core::Dispatcher;

use crate::convert;
use crate::suggest::closest;

/// How many operation names an "unknown operation" message shows as examples.
const EXAMPLES: usize = 6;

/// `check_service(name)`: nil if the dispatcher has the service, else the problem.
pub(crate) fn check_service(lua: &Lua, dispatcher: Arc<Dispatcher>) -> mlua::Result<Function> {
    lua.create_function(move |_, name: LuaValue| {
        let names: Vec<&str> = dispatcher
            .services()
            .iter()
            .map(|s| s.spec().name)
            .collect();
        let problem = match &name {
            LuaValue::String(s) => {
                let name = s.to_string_lossy();
                if names.contains(&name.as_str()) {
                    return Ok(None);
                }
                let hint = closest(&name, &names)
                    .map(|g| format!("did you mean '{g}'? "))
                    .unwrap_or_default();
                format!(
                    "aws.{name}: no such service; {hint}(services: {})",
                    names.join(", ")
                )
            }
            other => format!(
                "aws[...]: service names are strings, got {}",
                convert::describe(other)
            ),
        };
        Ok(Some(problem))
    })
}

/// `check_operation(service, name)`: nil if the service's model has the operation.
pub(crate) fn check_operation(lua: &Lua, dispatcher: Arc<Dispatcher>) -> mlua::Result<Function> {
    lua.create_function(move |_, (service, name): (String, LuaValue)| {
        let Some(svc) = dispatcher.service(&service) else {
            return Ok(Some(format!("aws.{service}: no such service")));
        };
        let model = svc.spec().model();
        let LuaValue::String(s) = &name else {
            return Ok(Some(format!(
                "aws.{service}[...]: operation names are strings, got {}",
                convert::describe(&name)
            )));
        };
        let name = s.to_string_lossy();
        if model.operation(&name).is_some() {
            return Ok(None);
        }
        Ok(Some(unknown_operation(model, &service, &name)))
    })
}

fn unknown_operation(model: &Model, service: &str, name: &str) -> String {
    let names: Vec<&str> = model.operation_names().collect();
    match closest(name, &names) {
        Some(guess) => format!("aws.{service}.{name}: no such operation; did you mean '{guess}'?"),
        None => format!(
            "aws.{service}.{name}: no such operation; operations are named as in the AWS API \
             reference ({}, ...)",
            names
                .iter()
                .take(EXAMPLES)
                .copied()
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// `caller()`: the script and line that called the prelude function calling this.
pub(crate) fn caller(lua: &Lua) -> mlua::Result<Function> {
    lua.create_function(|lua, ()| {
        Ok(lua
            .inspect_stack(2, |d| {
                let src = d.source().short_src.map(|s| s.into_owned());
                (src, d.current_line())
            })
            .unwrap_or_default())
    })
}

/// `invoke(service, operation, input, account, region)`: converts the input by the
/// operation's input shape, calls the dispatcher, converts the output.
pub(crate) fn invoke(
    lua: &Lua,
    dispatcher: Arc<Dispatcher>,
    host: String,
) -> mlua::Result<Function> {
    lua.create_async_function(
        move |lua,
              (service, operation, input, account, region): (
            String,
            String,
            LuaValue,
            Option<String>,
            Option<String>,
        )| {
            let dispatcher = dispatcher.clone();
            let host = host.clone();
            async move {
                let request = match shaped_input(&dispatcher, &service, &operation, &input) {
                    Ok(input) => Request::new(input),
                    Err(problem) => return problem_result(&lua, problem),
                };
                let mut ctx = dispatcher.default_context();
                ctx.host = host;
                if let Some(account) = account {
                    ctx.account = account;
                }
                if let Some(region) = region {
                    ctx.region = region;
                }
                match dispatcher
                    .call_request(&ctx, &service, &operation, request)
                    .await
                {
                    Ok(response) => {
                        let mut output = response.output;
                        if let Some(body) = response.body {
                            attach_body(&dispatcher, &service, &operation, &mut output, body).await;
                        }
                        Ok(MultiValue::from_iter([
                            LuaValue::Boolean(true),
                            convert::output(&lua, &output)?,
                        ]))
                    }
                    Err(error) => Ok(MultiValue::from_iter([
                        LuaValue::Boolean(false),
                        error_table(&lua, &dispatcher, &service, &operation, &error)?,
                    ])),
                }
            }
        },
    )
}

fn problem_result(lua: &Lua, problem: String) -> mlua::Result<MultiValue> {
    Ok(MultiValue::from_iter([
        LuaValue::Boolean(false),
        LuaValue::String(lua.create_string(problem)?),
    ]))
}

/// The operation's input as a shaped value, or what is wrong with the Lua table.
fn shaped_input(
    dispatcher: &Dispatcher,
    service: &str,
    operation: &str,
    input: &LuaValue,
) -> Result<Value, String> {
    let svc = dispatcher
        .service(service)
        .ok_or_else(|| format!("no service named {service}"))?;
    let model = svc.spec().model();
    let op = model
        .operation(operation)
        .ok_or_else(|| format!("no operation named {operation}"))?;
    match (&op.input, input) {
        (_, LuaValue::Nil) => Ok(Value::map()),
        (Some(shape), input @ LuaValue::Table(_)) => convert::input(model, shape, input, "input"),
        (None, LuaValue::Table(t)) if t.is_empty() => Ok(Value::map()),
        (None, LuaValue::Table(_)) => Err("takes no input, got a table with members".into()),
        (_, other) => Err(format!(
            "the input is a table like {{Name = \"value\"}}, got {}",
            convert::describe(other)
        )),
    }
}

/// Reads a streamed output payload (S3 `GetObject`'s `Body`) into the output's payload
/// member, so the script sees it like every other member.
async fn attach_body(
    dispatcher: &Dispatcher,
    service: &str,
    operation: &str,
    output: &mut Value,
    body: roto_core::dispatch::Body,
) {
    let payload = dispatcher
        .service(service)
        .map(|s| s.spec().model())
        .and_then(|m| {
            let op = m.operation(operation)?;
            m.resolve(op.output.as_ref()?).payload
        });
    let (Some(member), Ok(collected)) = (payload, body.collect().await) else {
        return;
    };
    output.insert(member, Value::Blob(collected.to_bytes().to_vec()));
}

/// The Lua error table of an AWS error.
fn error_table(
    lua: &Lua,
    dispatcher: &Dispatcher,
    service: &str,
    operation: &str,
    error: &AwsError,
) -> mlua::Result<LuaValue> {
    let t = lua.create_table()?;
    t.set("code", error.code.as_ref())?;
    t.set("message", error.message.as_str())?;
    if let Some(svc) = dispatcher.service(service) {
        t.set("status", error_status(svc.spec().model(), error))?;
    }
    t.set("service", service)?;
    t.set("operation", operation)?;
    Ok(LuaValue::Table(t))
}
