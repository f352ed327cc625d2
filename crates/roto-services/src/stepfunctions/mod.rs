//! Step Functions: state machines that run, over the json 1.0 protocol.
//!
//! The control plane (state machines with their versions and aliases, activities, tags)
//! is rows in the `sfn_*` tables; an execution runs on a background task that interprets
//! the Amazon States Language definition it started with, writes each history event as it
//! happens, and calls other services only through the dispatcher. The tables are created
//! with the first call, so a server that never uses Step Functions pays nothing for it.
//!
//! - [`arn`]: ARNs and names, as AWS builds and checks them.
//! - [`definition`]: the definition checks behind CreateStateMachine's `InvalidDefinition`
//!   and ValidateStateMachineDefinition's diagnostics.
//! - [`machines`]: state machines, versions, aliases, tags.
//! - [`activities`]: activities, GetActivityTask and the task-token callbacks.
//! - [`executions`]: starting, describing, stopping and listing executions, and their
//!   history ([`history`]).
//! - [`map_runs`]: the map runs of Distributed Map states (DescribeMapRun, ListMapRuns,
//!   UpdateMapRun).
//! - [`keyset`]: the paging of the lists that grow without bound.
//! - [`status_events`]: execution status changes as EventBridge events.
//! - [`metrics`]: the executions' metrics in `AWS/States`.
//! - [`test_state`]: TestState, one state run in the request; [`mock`] its mocks.
//! - [`interpreter`]: what runs an execution; [`intrinsics`] are its `States.*`
//!   functions, [`paths`] the checks of the paths a definition holds.

use std::io;
use std::sync::Arc;

use roto_core::store::LazySchema;
use roto_core::{
    AwsError, AwsResult, BoxFuture, Context, Env, Request, Response, Service, ServiceSpec, Value,
};

mod activities;
mod arn;
mod definition;
mod executions;
pub mod fuzz;
mod history;
mod interpreter;
mod intrinsics;
mod keyset;
mod machines;
mod map_runs;
mod metrics;
mod mock;
mod paths;
mod status_events;
mod tags;
mod test_state;

static SPEC: ServiceSpec = ServiceSpec {
    name: "stepfunctions",
    model: "stepfunctions",
    query_model: None,
    signing_names: &["states"],
    target_prefix: Some("AWSStepFunctions"),
    query_version: None,
    crc32_responses: false,
    validate_input: true,
};

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS sfn_machines (
    arn TEXT PRIMARY KEY,
    account TEXT NOT NULL,
    region TEXT NOT NULL,
    name TEXT NOT NULL,
    kind TEXT NOT NULL,
    definition TEXT NOT NULL,
    role_arn TEXT NOT NULL,
    created INTEGER NOT NULL,
    revision_id TEXT NOT NULL,
    logging TEXT NOT NULL,
    tracing TEXT NOT NULL,
    encryption TEXT NOT NULL,
    next_version INTEGER NOT NULL DEFAULT 1
);
CREATE INDEX IF NOT EXISTS sfn_machines_scope ON sfn_machines (account, region, created);
CREATE TABLE IF NOT EXISTS sfn_versions (
    arn TEXT PRIMARY KEY,
    machine_arn TEXT NOT NULL,
    version INTEGER NOT NULL,
    definition TEXT NOT NULL,
    role_arn TEXT NOT NULL,
    created INTEGER NOT NULL,
    revision_id TEXT NOT NULL,
    description TEXT
);
CREATE INDEX IF NOT EXISTS sfn_versions_machine ON sfn_versions (machine_arn, version);
CREATE TABLE IF NOT EXISTS sfn_aliases (
    arn TEXT PRIMARY KEY,
    machine_arn TEXT NOT NULL,
    name TEXT NOT NULL,
    description TEXT,
    routing TEXT NOT NULL,
    created INTEGER NOT NULL,
    updated INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS sfn_aliases_machine ON sfn_aliases (machine_arn, name);
CREATE TABLE IF NOT EXISTS sfn_activities (
    arn TEXT PRIMARY KEY,
    account TEXT NOT NULL,
    region TEXT NOT NULL,
    name TEXT NOT NULL,
    created INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS sfn_activities_scope ON sfn_activities (account, region, created);
CREATE TABLE IF NOT EXISTS sfn_tags (
    arn TEXT NOT NULL,
    key TEXT NOT NULL,
    value TEXT NOT NULL,
    PRIMARY KEY (arn, key)
);
";

/// Step Functions.
pub struct StepFunctions {
    env: Arc<Env>,
    schema: LazySchema,
    engine: Arc<interpreter::Engine>,
}

impl StepFunctions {
    /// The service; its tables are created with its first call. On a data directory that
    /// holds executions, those that were running go on.
    pub fn new(env: Arc<Env>) -> io::Result<StepFunctions> {
        let service = StepFunctions {
            engine: Arc::new(interpreter::Engine::new(env.clone())),
            env,
            schema: LazySchema::new(&[
                SCHEMA,
                executions::SCHEMA,
                history::SCHEMA,
                activities::SCHEMA,
                map_runs::SCHEMA,
            ]),
        };
        let stored = crate::clock_task::stored_table(&service.env, "sfn_executions");
        if stored.is_ok_and(|s| s) && tokio::runtime::Handle::try_current().is_ok() {
            service
                .ensure_schema()
                .and_then(|_| executions::resume_running(&service.engine))
                .map_err(|e| io::Error::other(e.message))?;
        }
        Ok(service)
    }

    /// Creates the tables on first use.
    fn ensure_schema(&self) -> AwsResult<()> {
        self.schema.store(&self.env.store).map(|_| ())
    }

    fn control(&self, ctx: &Context, operation: &str, input: &Value) -> Option<AwsResult<Value>> {
        Some(match operation {
            "CreateStateMachine" => self.create_state_machine(ctx, input),
            "DescribeStateMachine" => self.describe_state_machine(ctx, input),
            "ListStateMachines" => self.list_state_machines(ctx, input),
            "UpdateStateMachine" => self.update_state_machine(ctx, input),
            "DeleteStateMachine" => self.delete_state_machine(ctx, input),
            "PublishStateMachineVersion" => self.publish_state_machine_version(ctx, input),
            "ListStateMachineVersions" => self.list_state_machine_versions(ctx, input),
            "DeleteStateMachineVersion" => self.delete_state_machine_version(ctx, input),
            "CreateStateMachineAlias" => self.create_state_machine_alias(ctx, input),
            "DescribeStateMachineAlias" => self.describe_state_machine_alias(ctx, input),
            "UpdateStateMachineAlias" => self.update_state_machine_alias(ctx, input),
            "DeleteStateMachineAlias" => self.delete_state_machine_alias(ctx, input),
            "ListStateMachineAliases" => self.list_state_machine_aliases(ctx, input),
            "ValidateStateMachineDefinition" => definition::validate_operation(input),
            "CreateActivity" => self.create_activity(ctx, input),
            "DescribeActivity" => self.describe_activity(ctx, input),
            "ListActivities" => self.list_activities(ctx, input),
            "DeleteActivity" => self.delete_activity(ctx, input),
            "TagResource" => self.tag_resource(ctx, input),
            "UntagResource" => self.untag_resource(ctx, input),
            "ListTagsForResource" => self.list_tags_for_resource(ctx, input),
            "StartExecution" => self.start_execution(ctx, input),
            "DescribeExecution" => self.describe_execution(ctx, input),
            "StopExecution" => self.stop_execution(ctx, input),
            "ListExecutions" => self.list_executions(ctx, input),
            "GetExecutionHistory" => self.get_execution_history(ctx, input),
            "DescribeStateMachineForExecution" => {
                self.describe_state_machine_for_execution(ctx, input)
            }
            "DescribeMapRun" => self.describe_map_run(ctx, input),
            "ListMapRuns" => self.list_map_runs(ctx, input),
            "UpdateMapRun" => self.update_map_run(ctx, input),
            "SendTaskSuccess" => self.send_task_success(input),
            "SendTaskFailure" => self.send_task_failure(input),
            "SendTaskHeartbeat" => self.send_task_heartbeat(input),
            _ => return None,
        })
    }
}

impl Service for StepFunctions {
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
            self.ensure_schema()?;
            let input = &request.input;
            let output = match operation {
                "StartSyncExecution" => self.start_sync_execution(ctx, input).await,
                "GetActivityTask" => self.get_activity_task(ctx, input).await,
                "TestState" => self.test_state(ctx, input).await,
                "RedriveExecution" => self.redrive_execution(ctx, input).await,
                _ => match self.control(ctx, operation, input) {
                    Some(output) => output,
                    None => Err(AwsError::not_implemented(operation)),
                },
            };
            output.map(Response::new)
        })
    }

    fn stop(&self) -> BoxFuture<'_, ()> {
        self.engine.stop();
        Box::pin(async {})
    }
}

/// The page size a list operation uses: `maxResults` when given and not 0, else 100.
fn page_size(input: &Value) -> usize {
    match input.int("maxResults") {
        Some(n) if n > 0 => usize::try_from(n).unwrap_or(1000),
        _ => 100,
    }
}

/// InvalidToken for a `nextToken` this service did not issue.
fn bad_token() -> AwsError {
    AwsError::new("InvalidToken", "Invalid Token: 'Invalid token'")
}
