//! CloudFormation: templates deployed as stacks, over the query protocol.
//!
//! A stack's resources are created, updated and deleted by resource providers that call the
//! owning service's operations through the dispatcher (so each is traced, and no service's
//! tables are touched from here), on a background task per stack operation, in waves of the
//! dependency graph (independent resources in parallel). Stacks, their resources, events,
//! change sets and exports are rows of this service's tables, created on the first call.
//!
//! - [`template`]: the body read (JSON or YAML), its sections checked, summaries.
//! - [`sam`]: the `AWS::Serverless-2016-10-31` transform (and its APIs, `sam::apis`).
//! - [`intrinsics`]: intrinsic functions and pseudo parameters.
//! - [`parameters`]: parameter values, conditions, rules.
//! - [`graph`]: dependencies, creation waves, cycles.
//! - [`store`]: the tables and their rows.
//! - [`stacks`]: the stack operations (create, update, delete, describe, list, exports).
//! - [`deploy`]: the background work: resources reconciled, rolled back, events.
//! - [`watchdog`]: a running operation's timeout and rollback triggers.
//! - [`update_control`]: a running update cancelled, a failed rollback continued.
//! - [`aliases`]: stack aliases, names a stack also answers to.
//! - [`changesets`]: change sets.
//! - [`stack_policy`]: stack policies, checked and evaluated.
//! - [`providers`]: one provider per resource type, in a table.
//! - [`families`]: the operations beyond stacks and change sets, by family: stack sets
//!   ([`stacksets`], run by [`stackset_runs`]), the registry ([`registry`]), drift detection
//!   ([`drift`]), the IaC generator ([`generated`]), stack refactors ([`refactors`]),
//!   events by operation ([`operation_events`]), `RollbackStack` ([`rollback`]), and
//!   account-level reads ([`account`]). What they keep is documents of the service's
//!   document table (`cloudformation_items`).

use std::sync::Arc;

use roto_core::store::LazySchema;

use crate::documents::{documents_schema, Documents};
use roto_core::{
    AwsError, AwsResult, BoxFuture, Context, Env, Request, Response, Service, ServiceSpec, Value,
};

mod account;
mod aliases;
mod changesets;
mod deploy;
mod drift;
mod families;
pub mod fuzz;
mod generated;
mod graph;
mod intrinsics;
mod operation_events;
mod parameters;
mod providers;
mod refactors;
mod registry;
mod rollback;
mod sam;
mod stack_policy;
mod stacks;
mod stackset_runs;
mod stacksets;
mod store;
mod template;
mod update_control;
mod watchdog;

/// The document table of what the operations beyond stacks keep ([`families`]).
static ITEMS_SCHEMA: &[&str] = &[documents_schema!("cloudformation_items")];

static SPEC: ServiceSpec = ServiceSpec {
    name: "cloudformation",
    model: "cloudformation",
    query_model: None,
    signing_names: &["cloudformation"],
    target_prefix: None,
    query_version: Some("2010-05-15"),
    crc32_responses: false,
    validate_input: true,
};

/// A ValidationError, CloudFormation's answer to most bad requests.
pub(crate) fn validation(message: impl Into<String>) -> AwsError {
    AwsError::new("ValidationError", message).with_status(400)
}

/// The error for a stack no one has.
pub(crate) fn no_stack(name: &str) -> AwsError {
    validation(format!("Stack with id {name} does not exist"))
}

/// What the service's tasks share.
pub(crate) struct Inner {
    env: Arc<Env>,
    schema: LazySchema,
    /// Stack sets, registry types, drift detections, generated templates, scans, refactors.
    documents: Documents,
    /// The running updates CancelUpdateStack can cancel, by stack id.
    updates: deploy::Updates,
}

impl Inner {
    /// The store, its tables created.
    pub(crate) fn store(&self) -> AwsResult<&roto_core::store::Store> {
        self.schema.store(&self.env.store)
    }

    /// The dispatcher, through which providers reach other services.
    pub(crate) fn dispatcher(&self) -> AwsResult<Arc<roto_core::Dispatcher>> {
        self.env
            .dispatcher()
            .ok_or_else(|| AwsError::internal("the dispatcher is not running"))
    }
}

/// CloudFormation.
pub struct CloudFormation {
    inner: Arc<Inner>,
}

impl CloudFormation {
    /// The service; its tables are created on its first call.
    pub fn new(env: Arc<Env>) -> CloudFormation {
        CloudFormation {
            inner: Arc::new(Inner {
                documents: Documents::new(env.clone(), "cloudformation_items", ITEMS_SCHEMA),
                env,
                schema: LazySchema::new(&[store::SCHEMA]),
                updates: deploy::Updates::default(),
            }),
        }
    }

    async fn dispatch(&self, ctx: &Context, operation: &str, input: &Value) -> AwsResult<Value> {
        let inner = &self.inner;
        match operation {
            "ValidateTemplate" => stacks::validate_template(inner, ctx, input).await,
            "GetTemplateSummary" => stacks::get_template_summary(inner, ctx, input).await,
            "GetTemplate" => stacks::get_template(inner, ctx, input),
            "CreateStack" => stacks::create_stack(inner, ctx, input).await,
            "UpdateStack" => stacks::update_stack(inner, ctx, input).await,
            "DeleteStack" => stacks::delete_stack(inner, ctx, input),
            "DescribeStacks" => stacks::describe_stacks(inner, ctx, input),
            "ListStacks" => stacks::list_stacks(inner, ctx, input),
            "DescribeStackEvents" => stacks::describe_stack_events(inner, ctx, input),
            "DescribeStackResources" => stacks::describe_stack_resources(inner, ctx, input),
            "DescribeStackResource" => stacks::describe_stack_resource(inner, ctx, input),
            "ListStackResources" => stacks::list_stack_resources(inner, ctx, input),
            "ListExports" => stacks::list_exports(inner, ctx, input),
            "ListImports" => stacks::list_imports(inner, ctx, input),
            "UpdateTerminationProtection" => {
                stacks::update_termination_protection(inner, ctx, input)
            }
            "SetStackPolicy" => stacks::set_stack_policy(inner, ctx, input).await,
            "GetStackPolicy" => stacks::get_stack_policy(inner, ctx, input),
            "CreateChangeSet" => changesets::create_change_set(inner, ctx, input).await,
            "DescribeChangeSet" => changesets::describe_change_set(inner, ctx, input),
            "ExecuteChangeSet" => changesets::execute_change_set(inner, ctx, input),
            "DeleteChangeSet" => changesets::delete_change_set(inner, ctx, input),
            "ListChangeSets" => changesets::list_change_sets(inner, ctx, input),
            "SignalResource" => Ok(Value::map()),
            "CancelUpdateStack" => update_control::cancel_update_stack(inner, ctx, input),
            "ContinueUpdateRollback" => update_control::continue_update_rollback(inner, ctx, input),
            "SetAlias" => aliases::set_alias(inner, ctx, input),
            "RemoveAlias" => aliases::remove_alias(inner, ctx, input),
            other => families::dispatch(inner, ctx, other, input).await,
        }
    }
}

impl Service for CloudFormation {
    fn spec(&self) -> &'static ServiceSpec {
        &SPEC
    }

    fn call<'a>(
        &'a self,
        ctx: &'a Context,
        operation: &'a str,
        request: Request,
    ) -> BoxFuture<'a, AwsResult<Response>> {
        Box::pin(async move {
            let output = self.dispatch(ctx, operation, &request.input).await?;
            Ok(Response::new(output))
        })
    }
}
