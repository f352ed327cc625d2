//! The background work of a stack operation: resources reconciled with a template in waves
//! of the dependency graph (each wave's resources in parallel), events recorded as AWS
//! records them, rollback on failure, outputs and exports at the end.
//!
//! One routine, [`Job::apply`], serves creation, update and the update's rollback: each
//! resource the template includes is created (new), left alone (unchanged), updated in
//! place, or replaced (a property its type replaces on changed, or a type with no update),
//! and resources the template no longer includes are returned for the cleanup phase. A
//! replaced resource's old self is deleted at cleanup after success, or restored on
//! rollback.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::{Arc, Mutex, PoisonError};

use roto_core::timestamp::now_millis;
use roto_core::{Context, Dispatcher};
use serde_json::{Map, Value as Json};
use tokio::sync::watch;
use tokio::task::JoinSet;

use super::intrinsics::{Pseudo, Resolved, Scope};
use super::parameters::{self, ParameterValue};
use super::providers::{provider, Call};
use super::stack_policy::{Action, StackPolicy};
use super::store::{self, EventRow, OutputRow, ResourceRow, Stack};
use super::template::{scalar_text, section};
use super::watchdog::{self, Rollback};
use super::{graph, Inner};

/// One stack operation's facts, shared by its resource tasks.
pub(crate) struct Job {
    pub inner: Arc<Inner>,
    pub dispatcher: Arc<Dispatcher>,
    pub ctx: Context,
    pub stack_id: String,
    pub stack_name: String,
    pub notification_arns: Vec<String>,
    /// While an update can be cancelled, what tells it it was (see [`Updates`]).
    pub cancel: Mutex<Option<watch::Receiver<bool>>>,
    /// The resources a continued rollback skips (left as they are, `UPDATE_COMPLETE`).
    pub skip: BTreeSet<String>,
    /// The operation's `ClientRequestToken`, which its events carry.
    pub token: Option<String>,
    /// Why the watchdog stopped the operation (its timeout, a rollback trigger), if it did.
    pub stopped: Mutex<Option<String>>,
}

/// The stack status reason of an update CancelUpdateStack cancelled.
const CANCELLED: &str = "Stack update cancelled";

/// The status reason of a resource whose update was cancelled.
pub(crate) const UPDATE_CANCELLED: &str = "Resource update cancelled";

/// The running updates, each with the sender that cancels it, by stack id.
#[derive(Default)]
pub(crate) struct Updates(Mutex<HashMap<String, watch::Sender<bool>>>);

impl Updates {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, watch::Sender<bool>>> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Registers a stack's update: the receiver its job watches.
    pub(crate) fn register(&self, stack_id: &str) -> watch::Receiver<bool> {
        let (tx, rx) = watch::channel(false);
        self.lock().insert(stack_id.to_string(), tx);
        rx
    }

    /// Cancels the stack's running update; false when none can be cancelled.
    pub(crate) fn cancel(&self, stack_id: &str) -> bool {
        self.lock()
            .get(stack_id)
            .map(|tx| tx.send_replace(true))
            .is_some()
    }

    fn finish(&self, stack_id: &str) {
        self.lock().remove(stack_id);
    }
}

/// Resolves once `cancel` says the update was cancelled; never without one.
async fn until_cancelled(cancel: Option<watch::Receiver<bool>>) {
    if let Some(mut rx) = cancel {
        if rx.wait_for(|c| *c).await.is_ok() {
            return;
        }
    }
    std::future::pending().await
}

pub(crate) type State = BTreeMap<String, ResourceRow>;

/// What one resource's reconciliation gave: its row (or why it failed) and, when it was
/// replaced, its old row.
struct Reconciled {
    logical_id: String,
    row: Result<ResourceRow, (ResourceRow, String)>,
    replaced: Option<ResourceRow>,
}

impl Job {
    /// Records an event.
    fn event(
        &self,
        logical: &str,
        physical: Option<&str>,
        kind: &str,
        status: &str,
        reason: Option<&str>,
        props: Option<&Json>,
    ) {
        let Ok(store) = self.inner.store() else {
            return;
        };
        let event = EventRow {
            event_id: roto_core::dispatch::new_request_id(),
            logical_id: logical.to_string(),
            physical_id: physical.map(str::to_string),
            kind: kind.to_string(),
            status: status.to_string(),
            reason: reason.map(str::to_string),
            at: now_millis(),
            props: props.map(Json::to_string),
            token: self.token.clone(),
        };
        let _ = store::add_event(store, &self.stack_id, &event);
    }

    /// Sets the stack's status, recording the stack's own event.
    pub(crate) fn status(&self, status: &str, reason: Option<&str>) {
        if let Ok(store) = self.inner.store() {
            let _ = store::set_status(store, &self.stack_id, status, reason);
        }
        self.event(
            &self.stack_name,
            Some(&self.stack_id),
            "AWS::CloudFormation::Stack",
            status,
            reason,
            None,
        );
    }

    /// The update's cancellation, while it can still be cancelled.
    fn cancellation(&self) -> Option<watch::Receiver<bool>> {
        self.cancel
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Ends the update's cancellable phase (its rollback cannot be cancelled): whether it
    /// was cancelled.
    fn end_cancellable(&self) -> bool {
        self.inner.updates.finish(&self.stack_id);
        let taken = self
            .cancel
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        taken.is_some_and(|rx| *rx.borrow())
    }

    /// Stops the operation as a cancellation does, for `reason` (see [`watchdog`]).
    pub(crate) fn stop(&self, reason: &str) {
        *self.stopped.lock().unwrap_or_else(PoisonError::into_inner) = Some(reason.to_string());
        self.inner.updates.cancel(&self.stack_id);
    }

    /// Why the operation failed: the watchdog's reason if it stopped it, else `reason`.
    fn failure(&self, reason: String) -> String {
        let stopped = self.stopped.lock().unwrap_or_else(PoisonError::into_inner);
        stopped.clone().unwrap_or(reason)
    }

    /// Starts the watchdog over the running operation: `deadline` (a creation's timeout)
    /// and the stack's rollback triggers. Its task, which the caller aborts once the
    /// resources are deployed; none when there is nothing to watch.
    fn watch(
        self: &Arc<Self>,
        deadline: Option<i64>,
        rollback: Option<&Rollback>,
    ) -> Option<tokio::task::JoinHandle<()>> {
        let triggers = rollback.map(|r| r.triggers.clone()).unwrap_or_default();
        if deadline.is_none() && triggers.is_empty() {
            return None;
        }
        let mut cancel = self.cancel.lock().unwrap_or_else(PoisonError::into_inner);
        if cancel.is_none() {
            *cancel = Some(self.inner.updates.register(&self.stack_id));
        }
        Some(tokio::spawn(watchdog::watch(
            self.clone(),
            deadline,
            triggers,
        )))
    }

    /// Calls another service's operation on the stack's behalf (see [`Call::api`]).
    pub(crate) async fn api(
        &self,
        service: &str,
        operation: &str,
        input: Json,
    ) -> Result<Json, String> {
        let kind = "AWS::CloudFormation::Stack";
        let call = self.call(&self.stack_name, kind, Json::Null, None);
        call.api(service, operation, input).await
    }

    fn pseudo(&self) -> Pseudo {
        Pseudo {
            account: self.ctx.account.clone(),
            region: self.ctx.region.clone(),
            stack_name: self.stack_name.clone(),
            stack_id: self.stack_id.clone(),
            notification_arns: self.notification_arns.clone(),
        }
    }

    fn exports(&self) -> BTreeMap<String, String> {
        self.inner
            .store()
            .and_then(|s| store::exports(s, &self.ctx.account, &self.ctx.region))
            .unwrap_or_default()
            .into_iter()
            .map(|(name, value, _)| (name, value))
            .collect()
    }

    fn call(&self, logical: &str, kind: &str, props: Json, current: Option<&ResourceRow>) -> Call {
        Call {
            dispatcher: self.dispatcher.clone(),
            ctx: self.ctx.clone(),
            stack_name: self.stack_name.clone(),
            stack_id: self.stack_id.clone(),
            logical_id: logical.to_string(),
            kind: kind.to_string(),
            props,
            physical_id: current.and_then(|r| r.physical_id.clone()),
            previous: current.map(|r| r.resolved.clone()).unwrap_or_default(),
            old_props: current.map(|r| r.props.clone()).unwrap_or(Json::Null),
        }
    }

    fn save(&self, row: &ResourceRow) {
        if let Ok(store) = self.inner.store() {
            let _ = store::put_resource(store, &self.stack_id, row);
        }
    }

    /// Reconciles the stack's resources with `doc` and `params`, wave by wave, under the
    /// stack policy `policy` if there is one (a user's update). On success, the logical ids
    /// no longer included (for cleanup); on failure, why.
    pub(crate) async fn apply(
        self: &Arc<Self>,
        doc: &Json,
        params: &[ParameterValue],
        state: &mut State,
        replaced: &mut Vec<ResourceRow>,
        updating: bool,
        policy: Option<Arc<StackPolicy>>,
    ) -> Result<Vec<String>, String> {
        let pseudo = self.pseudo();
        let exports = self.exports();
        let scope_params = parameters::scope_values(doc, params);
        let empty = BTreeMap::new();
        let base = Scope {
            pseudo: &pseudo,
            parameters: &scope_params,
            mappings: section(doc, "Mappings"),
            conditions: &empty,
            resources: &BTreeMap::new(),
            exports: &exports,
        };
        let conditions = parameters::conditions(doc, &base)?;
        let included = included(doc, &conditions);
        if let Some(policy) = &policy {
            self.check_removals(policy, state, &included)?;
        }
        let graph = graph::dependencies(&included, section(doc, "Parameters"))?;
        let cancel = self.cancellation();
        for (seq, wave) in graph::waves(&graph)?.into_iter().enumerate() {
            if cancel.as_ref().is_some_and(|c| *c.borrow()) {
                return Err(CANCELLED.into());
            }
            let resolved: BTreeMap<String, Resolved> = state
                .iter()
                .map(|(k, r)| (k.clone(), r.resolved.clone()))
                .collect();
            let scope = Scope {
                conditions: &conditions,
                resources: &resolved,
                ..base
            };
            let mut tasks = JoinSet::new();
            let mut running = BTreeMap::new();
            let mut failures = Vec::new();
            for logical in wave {
                let resource = &included[&logical];
                let kind = resource["Type"].as_str().unwrap_or_default().to_string();
                let props = match scope.eval(&resource["Properties"]) {
                    Ok(p) => p
                        .filter(|p| !p.is_null())
                        .unwrap_or_else(|| Json::Object(Map::new())),
                    Err(e) => {
                        failures.push(self.fail_early(
                            &logical,
                            &kind,
                            state.get(&logical),
                            seq,
                            updating,
                            e,
                        ));
                        continue;
                    }
                };
                let job = self.clone();
                let current = state.get(&logical).cloned();
                running.insert(logical.clone(), (kind.clone(), current.clone()));
                let policy = policy.clone();
                tasks.spawn(async move {
                    job.reconcile(logical, kind, props, current, seq as i64, policy)
                        .await
                });
            }
            let mut cancelled = false;
            loop {
                let next = tokio::select! {
                    next = tasks.join_next() => next,
                    () = until_cancelled(cancel.clone()), if !cancelled => {
                        cancelled = true;
                        tasks.abort_all();
                        continue;
                    }
                };
                let Some(done) = next else { break };
                let Ok(done) = done else { continue };
                running.remove(&done.logical_id);
                if let Some(old) = done.replaced {
                    replaced.push(old);
                }
                match done.row {
                    Ok(row) => {
                        state.insert(done.logical_id, row);
                    }
                    Err((row, reason)) => {
                        state.insert(done.logical_id.clone(), row);
                        failures.push((done.logical_id, reason));
                    }
                }
            }
            if cancelled {
                for (logical, (kind, current)) in running {
                    let reason = if current.as_ref().is_some_and(|r| r.physical_id.is_some()) {
                        UPDATE_CANCELLED
                    } else {
                        "Resource creation cancelled"
                    };
                    let done = self.failed(logical, &kind, current, seq as i64, reason.into());
                    if let Err((row, _)) = done.row {
                        state.insert(done.logical_id, row);
                    }
                }
                return Err(CANCELLED.into());
            }
            if !failures.is_empty() {
                let names: Vec<&str> = failures.iter().map(|(l, _)| l.as_str()).collect();
                let verb = if updating { "update" } else { "create" };
                return Err(format!(
                    "The following resource(s) failed to {verb}: [{}]. ",
                    names.join(", ")
                ));
            }
        }
        Ok(state
            .keys()
            .filter(|k| !included.contains_key(*k))
            .cloned()
            .collect())
    }

    /// Fails the update, before anything is touched, if the policy denies deleting a
    /// resource the template no longer includes.
    fn check_removals(
        &self,
        policy: &StackPolicy,
        state: &State,
        included: &Map<String, Json>,
    ) -> Result<(), String> {
        let removed = state
            .values()
            .filter(|r| !included.contains_key(&r.logical_id));
        let mut denied = Vec::new();
        for row in removed {
            if let Err(reason) = policy.check(Action::Delete, &row.logical_id, &row.kind) {
                let physical = row.physical_id.as_deref();
                let status = "UPDATE_FAILED";
                self.event(
                    &row.logical_id,
                    physical,
                    &row.kind,
                    status,
                    Some(&reason),
                    None,
                );
                denied.push(row.logical_id.as_str());
            }
        }
        if denied.is_empty() {
            return Ok(());
        }
        Err(format!(
            "The following resource(s) failed to update: [{}]. ",
            denied.join(", ")
        ))
    }

    /// A resource whose properties could not be evaluated: its failure event and row.
    fn fail_early(
        &self,
        logical: &str,
        kind: &str,
        current: Option<&ResourceRow>,
        seq: usize,
        updating: bool,
        reason: String,
    ) -> (String, String) {
        let status = if updating && current.is_some() {
            "UPDATE_FAILED"
        } else {
            "CREATE_FAILED"
        };
        self.event(
            logical,
            current.and_then(|r| r.physical_id.as_deref()),
            kind,
            status,
            Some(&reason),
            None,
        );
        let mut row = current
            .cloned()
            .unwrap_or_else(|| new_row(logical, kind, seq as i64));
        row.status = status.into();
        row.reason = Some(reason.clone());
        self.save(&row);
        (logical.to_string(), reason)
    }

    /// Creates, updates, replaces or leaves one resource (updating or replacing it only
    /// where `policy`, if any, allows).
    async fn reconcile(
        self: Arc<Self>,
        logical: String,
        kind: String,
        props: Json,
        current: Option<ResourceRow>,
        seq: i64,
        policy: Option<Arc<StackPolicy>>,
    ) -> Reconciled {
        let props = match self.dynamic_references(props).await {
            Ok(p) => p,
            Err(e) => return self.failed(logical, &kind, current, seq, e),
        };
        if self.skip.contains(&logical) {
            return self.skipped(logical, kind, props, current, seq);
        }
        let Some(p) = provider(&kind) else {
            let reason = format!("Roto does not support resource type {kind} (see docs/services.md for the supported types)");
            return self.failed(logical, &kind, current, seq, reason);
        };
        let Some(existing) = current.filter(|r| r.physical_id.is_some()) else {
            return self.create(logical, kind, props, seq, "CREATE").await;
        };
        if existing.kind == kind && existing.props == props && existing.status.ends_with("COMPLETE")
        {
            return Reconciled {
                logical_id: logical,
                row: Ok(existing),
                replaced: None,
            };
        }
        let replaces = existing.kind != kind
            || p.update.is_none()
            || p.replaces
                .iter()
                .any(|m| existing.props.get(*m) != props.get(*m));
        if let Some(policy) = policy {
            let action = if replaces {
                Action::Replace
            } else {
                Action::Modify
            };
            if let Err(reason) = policy.check(action, &logical, &existing.kind) {
                return self.failed(logical, &kind, Some(existing), seq, reason);
            }
        }
        if replaces {
            let physical = existing.physical_id.clone();
            self.event(&logical, physical.as_deref(), &kind, "UPDATE_IN_PROGRESS", Some("Requested update requires the creation of a new physical resource; hence creating one."), Some(&props));
            let mut done = self
                .create(logical, kind, props, existing.seq, "UPDATE")
                .await;
            done.replaced = Some(existing);
            return done;
        }
        let call = self.call(&logical, &kind, props.clone(), Some(&existing));
        self.event(
            &logical,
            existing.physical_id.as_deref(),
            &kind,
            "UPDATE_IN_PROGRESS",
            None,
            Some(&props),
        );
        let mut row = existing.clone();
        row.props = props;
        row.updated = now_millis();
        let update = p.update.expect("checked above");
        match update(&call).await {
            Ok(resolved) => {
                row.status = "UPDATE_COMPLETE".into();
                row.reason = None;
                row.resolved = resolved;
                self.event(
                    &logical,
                    row.physical_id.as_deref(),
                    &kind,
                    "UPDATE_COMPLETE",
                    None,
                    None,
                );
                self.save(&row);
                Reconciled {
                    logical_id: logical,
                    row: Ok(row),
                    replaced: None,
                }
            }
            Err(reason) => {
                self.event(
                    &logical,
                    row.physical_id.as_deref(),
                    &kind,
                    "UPDATE_FAILED",
                    Some(&reason),
                    None,
                );
                let mut kept = existing;
                kept.status = "UPDATE_FAILED".into();
                kept.reason = Some(reason.clone());
                self.save(&kept);
                Reconciled {
                    logical_id: logical,
                    row: Err((kept, reason)),
                    replaced: None,
                }
            }
        }
    }

    /// A resource a continued rollback skips: kept as it is, recorded as rolled back.
    fn skipped(
        &self,
        logical: String,
        kind: String,
        props: Json,
        current: Option<ResourceRow>,
        seq: i64,
    ) -> Reconciled {
        let mut row = current.unwrap_or_else(|| new_row(&logical, &kind, seq));
        let physical = row.physical_id.clone();
        self.event(
            &logical,
            physical.as_deref(),
            &kind,
            "UPDATE_COMPLETE",
            None,
            None,
        );
        row.kind = kind;
        row.props = props;
        row.status = "UPDATE_COMPLETE".into();
        row.reason = None;
        self.save(&row);
        Reconciled {
            logical_id: logical,
            row: Ok(row),
            replaced: None,
        }
    }

    fn failed(
        &self,
        logical: String,
        kind: &str,
        current: Option<ResourceRow>,
        seq: i64,
        reason: String,
    ) -> Reconciled {
        let updating = current.as_ref().is_some_and(|r| r.physical_id.is_some());
        let status = if updating {
            "UPDATE_FAILED"
        } else {
            "CREATE_FAILED"
        };
        self.event(
            &logical,
            current.as_ref().and_then(|r| r.physical_id.as_deref()),
            kind,
            status,
            Some(&reason),
            None,
        );
        let mut row = current.unwrap_or_else(|| new_row(&logical, kind, seq));
        row.status = status.into();
        row.reason = Some(reason.clone());
        self.save(&row);
        Reconciled {
            logical_id: logical,
            row: Err((row, reason)),
            replaced: None,
        }
    }

    /// Creates a resource (`verb` CREATE, or UPDATE when it replaces another).
    async fn create(
        &self,
        logical: String,
        kind: String,
        props: Json,
        seq: i64,
        verb: &str,
    ) -> Reconciled {
        let Some(p) = provider(&kind) else {
            return self.failed(
                logical,
                &kind,
                None,
                seq,
                format!("Roto does not support resource type {kind}"),
            );
        };
        if verb == "CREATE" {
            self.event(
                &logical,
                None,
                &kind,
                "CREATE_IN_PROGRESS",
                None,
                Some(&props),
            );
        }
        let call = self.call(&logical, &kind, props.clone(), None);
        let mut row = new_row(&logical, &kind, seq);
        row.props = props;
        match (p.create)(&call).await {
            Ok(resolved) => {
                row.physical_id = Some(resolved.reference.clone());
                row.resolved = resolved;
                row.status = format!("{verb}_COMPLETE");
                if verb == "CREATE" {
                    self.event(
                        &logical,
                        row.physical_id.as_deref(),
                        &kind,
                        "CREATE_IN_PROGRESS",
                        Some("Resource creation Initiated"),
                        None,
                    );
                }
                self.event(
                    &logical,
                    row.physical_id.as_deref(),
                    &kind,
                    &row.status,
                    None,
                    None,
                );
                self.save(&row);
                Reconciled {
                    logical_id: logical,
                    row: Ok(row),
                    replaced: None,
                }
            }
            Err(reason) => {
                row.status = format!("{verb}_FAILED");
                row.reason = Some(reason.clone());
                self.event(&logical, None, &kind, &row.status, Some(&reason), None);
                if verb == "CREATE" {
                    self.save(&row);
                }
                Reconciled {
                    logical_id: logical,
                    row: Err((row, reason)),
                    replaced: None,
                }
            }
        }
    }

    /// Deletes resources, newest first; `Retain` ones are skipped. Returns the first
    /// failure's reason.
    pub(crate) async fn delete(
        &self,
        rows: Vec<ResourceRow>,
        doc: &Json,
        forget: bool,
    ) -> Result<(), String> {
        let mut rows = rows;
        rows.sort_by_key(|r| std::cmp::Reverse(r.seq));
        let mut failure = None;
        for row in rows {
            if let Err(e) = self.delete_one(&row, doc, "DeletionPolicy", forget).await {
                failure.get_or_insert(e);
            }
        }
        failure.map_or(Ok(()), Err)
    }

    /// Deletes one resource under the policy `policy` names (`DeletionPolicy`, or
    /// `UpdateReplacePolicy` for a replaced one); `forget` removes its row.
    pub(crate) async fn delete_one(
        &self,
        row: &ResourceRow,
        doc: &Json,
        policy: &str,
        forget: bool,
    ) -> Result<(), String> {
        let retain = section(doc, "Resources")
            .get(&row.logical_id)
            .and_then(|r| r[policy].as_str())
            .is_some_and(|p| p == "Retain" || p == "RetainExceptOnCreate");
        let physical = row.physical_id.as_deref();
        let result = match (physical, provider(&row.kind)) {
            (Some(_), Some(p)) if !retain => {
                self.event(
                    &row.logical_id,
                    physical,
                    &row.kind,
                    "DELETE_IN_PROGRESS",
                    None,
                    None,
                );
                let call = self.call(&row.logical_id, &row.kind, row.props.clone(), Some(row));
                (p.delete)(&call).await
            }
            _ => Ok(()),
        };
        match result {
            Ok(()) => {
                let status = if retain && physical.is_some() {
                    "DELETE_SKIPPED"
                } else {
                    "DELETE_COMPLETE"
                };
                self.event(&row.logical_id, physical, &row.kind, status, None, None);
                if forget {
                    if let Ok(store) = self.inner.store() {
                        let _ = store::remove_resource(store, &self.stack_id, &row.logical_id);
                    }
                }
                Ok(())
            }
            Err(reason) => {
                self.event(
                    &row.logical_id,
                    physical,
                    &row.kind,
                    "DELETE_FAILED",
                    Some(&reason),
                    None,
                );
                let mut failed = row.clone();
                failed.status = "DELETE_FAILED".into();
                failed.reason = Some(reason.clone());
                self.save(&failed);
                Err(reason)
            }
        }
    }

    /// The template's outputs over the stack's resources.
    pub(crate) fn outputs(
        &self,
        doc: &Json,
        params: &[ParameterValue],
        state: &State,
    ) -> Result<Vec<OutputRow>, String> {
        let pseudo = self.pseudo();
        let exports = self.exports();
        let scope_params = parameters::scope_values(doc, params);
        let resolved: BTreeMap<String, Resolved> = state
            .iter()
            .map(|(k, r)| (k.clone(), r.resolved.clone()))
            .collect();
        let empty = BTreeMap::new();
        let base = Scope {
            pseudo: &pseudo,
            parameters: &scope_params,
            mappings: section(doc, "Mappings"),
            conditions: &empty,
            resources: &resolved,
            exports: &exports,
        };
        let conditions = parameters::conditions(doc, &base)?;
        let scope = Scope {
            conditions: &conditions,
            ..base
        };
        let mut outputs = Vec::new();
        for (key, output) in section(doc, "Outputs") {
            if let Some(c) = output["Condition"].as_str() {
                if conditions.get(c) != Some(&true) {
                    continue;
                }
            }
            let value = scope.value(&output["Value"], 0)?;
            let export = match output["Export"].get("Name") {
                Some(name) => Some(scalar_text(&scope.value(name, 0)?)),
                None => None,
            };
            outputs.push(OutputRow {
                key: key.clone(),
                value: scalar_text(&value),
                description: output["Description"].as_str().map(str::to_string),
                export,
            });
        }
        Ok(outputs)
    }

    /// Replaces every `{{resolve:ssm:...}}` and `{{resolve:secretsmanager:...}}` in the
    /// properties' strings with the value it names.
    async fn dynamic_references(&self, props: Json) -> Result<Json, String> {
        let text = props.to_string();
        if !text.contains("{{resolve:") {
            return Ok(props);
        }
        let mut found = BTreeSet::new();
        collect_references(&props, &mut found);
        let mut values = BTreeMap::new();
        for reference in found {
            let value = self.resolve_reference(&reference).await?;
            values.insert(reference, value);
        }
        Ok(replace_references(props, &values))
    }

    async fn resolve_reference(&self, reference: &str) -> Result<String, String> {
        let inner = &reference["{{resolve:".len()..reference.len() - 2];
        let (service, rest) = inner.split_once(':').unwrap_or((inner, ""));
        let call = self.call("DynamicReference", "", Json::Null, None);
        match service {
            "ssm" | "ssm-secure" => {
                let input = serde_json::json!({"Name": rest, "WithDecryption": true});
                let out = call.api("ssm", "GetParameter", input).await?;
                Ok(out["Parameter"]["Value"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string())
            }
            "secretsmanager" => secret_reference(&call, rest).await,
            other => Err(format!("Unsupported dynamic reference service {other}")),
        }
    }
}

/// A `{{resolve:secretsmanager:id:SecretString:key:stage:version}}` reference's value.
async fn secret_reference(call: &Call, rest: &str) -> Result<String, String> {
    let parts: Vec<&str> = rest.split(':').collect();
    let id_len = if rest.starts_with("arn:") {
        7.min(parts.len())
    } else {
        1
    };
    let id = parts[..id_len].join(":");
    let field = |i: usize| parts.get(id_len + i).copied().filter(|s| !s.is_empty());
    let mut input = serde_json::json!({"SecretId": id});
    if let Some(stage) = field(2) {
        input["VersionStage"] = Json::String(stage.into());
    }
    if let Some(version) = field(3) {
        input["VersionId"] = Json::String(version.into());
    }
    let out = call.api("secretsmanager", "GetSecretValue", input).await?;
    let secret = out["SecretString"].as_str().unwrap_or_default().to_string();
    match field(1) {
        None => Ok(secret),
        Some(key) => {
            let doc: Json = serde_json::from_str(&secret)
                .map_err(|_| format!("Could not parse SecretString JSON for key {key}"))?;
            doc.get(key)
                .map(scalar_text)
                .ok_or_else(|| format!("Could not find SecretString JSON key {key}"))
        }
    }
}

fn collect_references(value: &Json, found: &mut BTreeSet<String>) {
    let mut pending = vec![value];
    while let Some(v) = pending.pop() {
        match v {
            Json::String(s) => {
                let mut rest = s.as_str();
                while let Some(start) = rest.find("{{resolve:") {
                    let Some(end) = rest[start..].find("}}") else {
                        break;
                    };
                    found.insert(rest[start..start + end + 2].to_string());
                    rest = &rest[start + end + 2..];
                }
            }
            Json::Array(items) => pending.extend(items),
            Json::Object(map) => pending.extend(map.values()),
            _ => {}
        }
    }
}

fn replace_references(value: Json, values: &BTreeMap<String, String>) -> Json {
    match value {
        Json::String(mut s) => {
            for (reference, v) in values {
                s = s.replace(reference, v);
            }
            Json::String(s)
        }
        Json::Array(items) => Json::Array(
            items
                .into_iter()
                .map(|i| replace_references(i, values))
                .collect(),
        ),
        Json::Object(map) => Json::Object(
            map.into_iter()
                .map(|(k, v)| (k, replace_references(v, values)))
                .collect(),
        ),
        other => other,
    }
}

/// The template's resources whose condition holds, each `Fn::If` in them reduced to the
/// branch its condition takes: a branch not taken may name a resource left out (CDK's
/// bootstrap template names its optional KMS key so), and AWS does not count it.
fn included(doc: &Json, conditions: &BTreeMap<String, bool>) -> Map<String, Json> {
    section(doc, "Resources")
        .iter()
        .filter(|(_, r)| {
            r["Condition"]
                .as_str()
                .is_none_or(|c| conditions.get(c) == Some(&true))
        })
        .map(|(k, v)| (k.clone(), taken_branches(v.clone(), conditions)))
        .collect()
}

/// `value` with each `Fn::If` whose condition is known replaced by the branch it takes.
/// Templates nest at most 128 deep (both readers bound it), so recursion is bounded.
fn taken_branches(value: Json, conditions: &BTreeMap<String, bool>) -> Json {
    match value {
        Json::Object(map) => {
            if let Some(Json::Array(args)) = map.get("Fn::If").filter(|_| map.len() == 1) {
                let taken = match (args.as_slice(), args.first().and_then(Json::as_str)) {
                    ([_, yes, no], Some(c)) => conditions.get(c).map(|&t| if t { yes } else { no }),
                    _ => None,
                };
                if let Some(branch) = taken {
                    return taken_branches(branch.clone(), conditions);
                }
            }
            Json::Object(
                map.into_iter()
                    .map(|(k, v)| (k, taken_branches(v, conditions)))
                    .collect(),
            )
        }
        Json::Array(items) => Json::Array(
            items
                .into_iter()
                .map(|i| taken_branches(i, conditions))
                .collect(),
        ),
        other => other,
    }
}

fn new_row(logical: &str, kind: &str, seq: i64) -> ResourceRow {
    ResourceRow {
        logical_id: logical.to_string(),
        kind: kind.to_string(),
        physical_id: None,
        status: "CREATE_IN_PROGRESS".into(),
        reason: None,
        updated: now_millis(),
        seq,
        props: Json::Null,
        resolved: Resolved::default(),
    }
}

/// The stack's resources as the engine works on them.
pub(crate) fn state_of(inner: &Inner, stack_id: &str) -> State {
    inner
        .store()
        .and_then(|s| store::resources(s, stack_id))
        .unwrap_or_default()
        .into_iter()
        .map(|r| (r.logical_id.clone(), r))
        .collect()
}

/// Creates a stack's resources, watched by its timeout and rollback triggers; on failure
/// rolls back (or stops, with rollback disabled).
pub(crate) async fn run_create(job: Arc<Job>, stack: Stack) {
    job.status("CREATE_IN_PROGRESS", Some("User Initiated"));
    let doc = stack.meta.processed.clone();
    let mut state = State::new();
    let deadline = stack.meta.timeout.map(|m| stack.created + m * 60_000);
    let rollback = stack.meta.rollback.clone().unwrap_or_default();
    let watch = job.watch(deadline, Some(&rollback));
    let result = job
        .apply(
            &doc,
            &stack.meta.parameters,
            &mut state,
            &mut Vec::new(),
            false,
            None,
        )
        .await;
    if let Some(watch) = watch {
        watch.abort();
    }
    job.end_cancellable();
    let result = match result {
        Ok(_) => watchdog::monitor(&job, &rollback, false).await,
        Err(reason) => Err(job.failure(reason)),
    };
    let result = result.and_then(|()| finish_outputs(&job, &stack, &doc, &state));
    let Err(reason) = result else {
        job.status("CREATE_COMPLETE", None);
        return;
    };
    if stack.meta.disable_rollback {
        job.status("CREATE_FAILED", Some(reason.trim_end()));
        return;
    }
    job.status(
        "ROLLBACK_IN_PROGRESS",
        Some(&format!("{reason}Rollback requested by user.")),
    );
    let rows: Vec<ResourceRow> = state.into_values().collect();
    match job.delete(rows, &Json::Null, true).await {
        Ok(()) => job.status("ROLLBACK_COMPLETE", None),
        Err(e) => job.status("ROLLBACK_FAILED", Some(&e)),
    }
}

/// Computes the outputs, stores them with the stack and publishes its exports.
fn finish_outputs(job: &Job, stack: &Stack, doc: &Json, state: &State) -> Result<(), String> {
    let outputs = job.outputs(doc, &stack.meta.parameters, state)?;
    let store = job.inner.store().map_err(|e| e.message)?;
    store::set_exports(store, stack, &outputs)?;
    let Some(mut current) = store::find_stack(store, &job.ctx, &stack.id).map_err(|e| e.message)?
    else {
        return Ok(());
    };
    current.meta.outputs = outputs;
    store::put_stack(store, &current).map_err(|e| e.message)
}

/// Updates a stack from `old` to `new` (already stored as the stack's template) under
/// `policy`, watched by its rollback triggers; on failure rolls back to `old`, keeping the
/// stack policy and the rollback triggers the update set.
pub(crate) async fn run_update(
    job: Arc<Job>,
    old: Stack,
    new: Stack,
    policy: Option<Arc<StackPolicy>>,
) {
    job.status("UPDATE_IN_PROGRESS", Some("User Initiated"));
    let doc = new.meta.processed.clone();
    let mut state = state_of(&job.inner, &job.stack_id);
    let mut replaced = Vec::new();
    let rollback = new.meta.rollback.clone().unwrap_or_default();
    let watch = job.watch(None, Some(&rollback));
    let result = job
        .apply(
            &doc,
            &new.meta.parameters,
            &mut state,
            &mut replaced,
            true,
            policy,
        )
        .await;
    if let Some(watch) = watch {
        watch.abort();
    }
    let cancelled = job.end_cancellable();
    let result = match result.and_then(|removed| match cancelled {
        true => Err(CANCELLED.to_string()),
        false => Ok(removed),
    }) {
        Ok(removed) => watchdog::monitor(&job, &rollback, true)
            .await
            .map(|()| removed),
        Err(reason) => Err(job.failure(reason)),
    };
    let result =
        result.and_then(|removed| finish_outputs(&job, &new, &doc, &state).map(|()| removed));
    match result {
        Ok(removed) => {
            job.status("UPDATE_COMPLETE_CLEANUP_IN_PROGRESS", None);
            cleanup(&job, &old.meta.processed, &state, removed, replaced).await;
            job.status("UPDATE_COMPLETE", None);
        }
        Err(reason) => {
            let restored = Stack {
                meta: store::Meta {
                    policy: new.meta.policy.clone(),
                    rollback: new.meta.rollback.clone(),
                    requests: new.meta.requests.clone(),
                    ..old.meta
                },
                ..old
            };
            rollback_update(&job, restored, state, replaced, &reason).await
        }
    }
}

/// Deletes what an update left behind: resources no longer declared and the old selves of
/// replaced ones.
async fn cleanup(
    job: &Job,
    old_doc: &Json,
    state: &State,
    removed: Vec<String>,
    replaced: Vec<ResourceRow>,
) {
    for old in replaced {
        let _ = job
            .delete_one(&old, old_doc, "UpdateReplacePolicy", false)
            .await;
    }
    let rows: Vec<ResourceRow> = removed
        .iter()
        .filter_map(|l| state.get(l).cloned())
        .collect();
    let _ = job.delete(rows, old_doc, true).await;
}

async fn rollback_update(
    job: &Arc<Job>,
    old: Stack,
    mut state: State,
    replaced: Vec<ResourceRow>,
    reason: &str,
) {
    job.status("UPDATE_ROLLBACK_IN_PROGRESS", Some(reason));
    if let Ok(store) = job.inner.store() {
        let mut stack = old.clone();
        stack.status = "UPDATE_ROLLBACK_IN_PROGRESS".into();
        let _ = store::put_stack(store, &stack);
    }
    let mut discarded = Vec::new();
    for old_row in replaced {
        if let Some(new_row) = state.insert(old_row.logical_id.clone(), old_row.clone()) {
            discarded.push(new_row);
        }
        job.save(&old_row);
    }
    roll_back(job, &old, state, discarded).await
}

/// The rollback proper (which ContinueUpdateRollback resumes): the stack's previous
/// template `old` applied over what the failed update left in `state`, then the
/// replacements it made (`discarded`) and the resources `old` does not include deleted.
pub(crate) async fn roll_back(
    job: &Arc<Job>,
    old: &Stack,
    mut state: State,
    discarded: Vec<ResourceRow>,
) {
    let doc = old.meta.processed.clone();
    let result = job
        .apply(
            &doc,
            &old.meta.parameters,
            &mut state,
            &mut Vec::new(),
            true,
            None,
        )
        .await;
    match result {
        Ok(removed) => {
            job.status("UPDATE_ROLLBACK_COMPLETE_CLEANUP_IN_PROGRESS", None);
            for row in discarded {
                let _ = job
                    .delete_one(&row, &Json::Null, "DeletionPolicy", false)
                    .await;
            }
            let rows: Vec<ResourceRow> = removed
                .iter()
                .filter_map(|l| state.get(l).cloned())
                .collect();
            let _ = job.delete(rows, &Json::Null, true).await;
            let _ = finish_outputs(job, old, &doc, &state);
            job.status("UPDATE_ROLLBACK_COMPLETE", None);
        }
        Err(e) => job.status("UPDATE_ROLLBACK_FAILED", Some(&e)),
    }
}

/// Deletes a stack's resources and then the stack.
pub(crate) async fn run_delete(job: Arc<Job>, stack: Stack) {
    job.status("DELETE_IN_PROGRESS", Some("User Initiated"));
    let rows: Vec<ResourceRow> = state_of(&job.inner, &job.stack_id).into_values().collect();
    match job.delete(rows, &stack.meta.processed, true).await {
        Ok(()) => {
            if let Ok(store) = job.inner.store() {
                let _ = store::set_exports(store, &stack, &[]);
                let _ = store::remove_change_sets(store, &stack.id);
            }
            job.status("DELETE_COMPLETE", None);
        }
        Err(e) => job.status(
            "DELETE_FAILED",
            Some(&format!("The following resource(s) failed to delete: {e}")),
        ),
    }
}
