//! The list of every model operation and how Roto serves it, generated into
//! `docs/operations.md` from the embedded models and the services themselves, so that it
//! cannot drift from the code and covers every service `roto_services::all` builds.
//!
//! An operation a service lists in its [`Service::featureless`] table is answered as AWS
//! answers a resource without the feature; any other is called once with an empty input and
//! is served unless it answers `NotImplemented`. The test fails when the committed list is
//! stale (`ROTO_UPDATE_OPERATIONS=1 cargo test -p roto-services --test operations` rewrites
//! it) and when a service leaves an operation of its model unserved that
//! `not_yet_served.txt` does not list.

use std::fmt::Write;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use roto_core::featureless;
use roto_core::model::{Model, Shape, ShapeKind};
use roto_core::store::{Store, StoreMode};
use roto_core::{Dispatcher, Env, Request, Service, Value};

/// The operations no service serves yet, one `service:Operation` a line: the list may only
/// shrink (an operation served now must leave it, and no other may join it).
const NOT_YET_SERVED: &str = include_str!("not_yet_served.txt");

/// How one operation is served.
#[derive(Clone, Copy, PartialEq)]
enum Serving {
    Implemented,
    Featureless,
    Unserved,
}

impl Serving {
    fn label(self) -> &'static str {
        match self {
            Serving::Implemented => "implemented",
            Serving::Featureless => "answered as a resource without the feature",
            Serving::Unserved => "not served (501 NotImplemented)",
        }
    }
}

/// The smallest value of `shape` that passes the model's checks (required members, lengths,
/// ranges, enums), so that a service that validates before it dispatches still reaches its
/// dispatch. `depth` bounds recursive shapes.
fn minimal(model: &Model, shape: &Shape, depth: usize) -> Value {
    let min = shape.min.unwrap_or(0.0).max(1.0) as usize;
    match shape.kind {
        ShapeKind::Structure => {
            let mut value = Value::map();
            for name in &shape.required {
                if let (Some(member), true) = (shape.members.get(name), depth < 8) {
                    value.insert(*name, minimal(model, model.resolve(member), depth + 1));
                }
            }
            value
        }
        ShapeKind::List => match (&shape.member, depth < 8) {
            (Some(member), true) => {
                let item = minimal(model, model.resolve(member), depth + 1);
                Value::List(vec![item; min])
            }
            _ => Value::List(Vec::new()),
        },
        ShapeKind::Map => Value::map(),
        ShapeKind::String => match shape.enum_values.first() {
            Some(first) => Value::String(first.to_string()),
            None => Value::String("a".repeat(min)),
        },
        ShapeKind::Integer | ShapeKind::Long => Value::Integer(shape.min.unwrap_or(1.0) as i64),
        ShapeKind::Float | ShapeKind::Double => Value::Float(shape.min.unwrap_or(1.0)),
        ShapeKind::Boolean => Value::Bool(false),
        ShapeKind::Blob => Value::Blob(vec![b'a'; min]),
        ShapeKind::Timestamp => Value::Timestamp(0),
    }
}

/// Whether calling `operation` with `input` answers `NotImplemented`.
async fn not_implemented(
    dispatcher: &Dispatcher,
    service: &dyn Service,
    operation: &str,
    input: Value,
) -> bool {
    let ctx = dispatcher.default_context();
    let call = service.call(&ctx, operation, Request::new(input));
    matches!(
        tokio::time::timeout(Duration::from_secs(10), call).await,
        Ok(Err(e)) if e.code == "NotImplemented" && e.status == Some(501)
    )
}

/// How `service` serves `operation`: called with an empty input and with the smallest valid
/// one, it is not served if either answers `NotImplemented`.
async fn served(dispatcher: &Dispatcher, service: &dyn Service, operation: &str) -> Serving {
    if featureless::lists(service.featureless(), operation) {
        return Serving::Featureless;
    }
    let model = service.spec().model();
    let input = model
        .operation(operation)
        .and_then(|op| op.input.as_ref())
        .map_or_else(Value::map, |r| minimal(model, model.resolve(r), 0));
    if not_implemented(dispatcher, service, operation, Value::map()).await
        || not_implemented(dispatcher, service, operation, input).await
    {
        return Serving::Unserved;
    }
    Serving::Implemented
}

/// Every service's operations, in model order, with how each is served.
async fn operations() -> Vec<(&'static str, Vec<(&'static str, Serving)>)> {
    let env = Arc::new(Env::new(
        Store::open(StoreMode::Ephemeral).expect("an ephemeral store"),
        100,
        "000000000000".into(),
        "us-east-1".into(),
        "localhost".into(),
    ));
    env.set_option("lambda-executor", "none");
    let services = roto_services::all(&env).expect("the services");
    let dispatcher = Dispatcher::start(env, services);
    let mut listed = Vec::new();
    for service in dispatcher.services() {
        let spec = service.spec();
        let mut names: Vec<&'static str> = spec.model().operation_names().collect();
        names.sort_unstable();
        let mut ops = Vec::new();
        for name in names {
            ops.push((name, served(&dispatcher, service.as_ref(), name).await));
        }
        listed.push((spec.name, ops));
    }
    listed
}

/// The Markdown page.
fn render(services: &[(&'static str, Vec<(&'static str, Serving)>)]) -> String {
    let mut page = String::from(
        "# Operations\n\n\
         <!-- Generated by crates/roto-services/tests/operations.rs; do not edit. Regenerate with\n\
         `ROTO_UPDATE_OPERATIONS=1 cargo test -p roto-services --test operations`. -->\n\n\
         Every operation of each served service's AWS model, and how Roto serves it:\n\
         **implemented**; **answered as a resource without the feature** (a feature Roto does\n\
         not model, answered as AWS answers for a resource that does not use it: the empty\n\
         configuration, the default, or the documented not-found error); or **not served**\n\
         (`NotImplemented`, 501). CI fails when an operation is not served and not listed in\n\
         `crates/roto-services/tests/not_yet_served.txt`, a list that may only shrink.\n\n\
         | service | operations | implemented | without the feature | not served |\n\
         |---|---|---|---|---|\n",
    );
    for (name, ops) in services {
        let count = |s: Serving| ops.iter().filter(|(_, x)| *x == s).count();
        let _ = writeln!(
            page,
            "| [{name}](#{name}) | {} | {} | {} | {} |",
            ops.len(),
            count(Serving::Implemented),
            count(Serving::Featureless),
            count(Serving::Unserved)
        );
    }
    for (name, ops) in services {
        let _ = write!(page, "\n## {name}\n\n| operation | served |\n|---|---|\n");
        for (op, served) in ops {
            let _ = writeln!(page, "| {op} | {} |", served.label());
        }
    }
    page
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_model_operation_is_served_and_the_list_is_current() {
    let services = operations().await;
    let page = render(&services);
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/operations.md");
    if std::env::var_os("ROTO_UPDATE_OPERATIONS").is_some() {
        std::fs::write(&path, &page).expect("docs/operations.md written");
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == page,
        "docs/operations.md is stale: regenerate it with \
         ROTO_UPDATE_OPERATIONS=1 cargo test -p roto-services --test operations"
    );
    let unserved: Vec<String> = services
        .iter()
        .flat_map(|(name, ops)| {
            ops.iter()
                .filter(|(_, s)| *s == Serving::Unserved)
                .map(move |(op, _)| format!("{name}:{op}"))
        })
        .collect();
    let known: Vec<&str> = NOT_YET_SERVED
        .lines()
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .collect();
    let new: Vec<&String> = unserved
        .iter()
        .filter(|u| !known.contains(&u.as_str()))
        .collect();
    assert!(new.is_empty(), "operations not served: {new:?}");
    let served: Vec<&&str> = known
        .iter()
        .filter(|k| !unserved.iter().any(|u| u == *k))
        .collect();
    assert!(
        served.is_empty(),
        "served now, so remove them from tests/not_yet_served.txt: {served:?}"
    );
}
