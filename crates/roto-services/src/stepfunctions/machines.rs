//! State machines, their published versions and their aliases.
//!
//! A machine's row holds its current definition and revision id; publishing copies the
//! current revision into `sfn_versions` under the next version number (numbers are never
//! reused), and an alias routes to one or two versions by weight.

use roto_core::dispatch::new_request_id;
use roto_core::store::Cached;
use roto_core::timestamp::now_millis;
use roto_core::value::EpochMillis;
use roto_core::{AwsError, AwsResult, Context, Value};
use rusqlite::{params, OptionalExtension};
use serde_json::Value as Json;

use super::arn::{self, Target};
use super::interpreter::distributed::child_definition;
use super::keyset::Keyset;
use super::{bad_token, definition, page_size, StepFunctions};
use crate::paging::page;

/// A state machine as stored.
#[derive(Debug, Clone)]
pub(super) struct Machine {
    pub arn: String,
    pub name: String,
    pub kind: String,
    pub definition: String,
    pub role_arn: String,
    pub created: EpochMillis,
    pub revision_id: String,
    logging: String,
    tracing: String,
    encryption: String,
}

/// What an execution runs: a machine's current revision, or one of its versions.
#[derive(Debug, Clone)]
pub(super) struct Runnable {
    /// The unqualified state machine.
    pub machine: Machine,
    /// The definition to run.
    pub definition: String,
    /// The version run, if a version or alias was named.
    pub version_arn: Option<String>,
    /// The alias named, if any.
    pub alias_arn: Option<String>,
}

const MACHINE_COLUMNS: &str =
    "arn, name, kind, definition, role_arn, created, revision_id, logging, tracing, encryption";

fn machine_from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Machine> {
    Ok(Machine {
        arn: r.get(0)?,
        name: r.get(1)?,
        kind: r.get(2)?,
        definition: r.get(3)?,
        role_arn: r.get(4)?,
        created: r.get(5)?,
        revision_id: r.get(6)?,
        logging: r.get(7)?,
        tracing: r.get(8)?,
        encryption: r.get(9)?,
    })
}

/// StateMachineDoesNotExist in AWS's words.
pub(super) fn no_machine(arn: &str) -> AwsError {
    AwsError::new(
        "StateMachineDoesNotExist",
        format!("State Machine Does Not Exist: '{arn}'"),
    )
}

pub(super) fn not_found(arn: &str) -> AwsError {
    AwsError::new("ResourceNotFound", format!("Resource not found: '{arn}'"))
        .with_field("resourceName", arn)
}

fn json_text(value: Option<&Value>, default: Value) -> String {
    value.cloned().unwrap_or(default).to_json().to_string()
}

fn stored(text: &str) -> Value {
    Value::from_json(&serde_json::from_str(text).unwrap_or_default())
}

fn default_logging() -> Value {
    Value::map()
        .with("level", "OFF")
        .with("includeExecutionData", false)
}

fn default_tracing() -> Value {
    Value::map().with("enabled", false)
}

fn default_encryption() -> Value {
    Value::map().with("type", "AWS_OWNED_KEY")
}

/// Checks a role ARN the way AWS does before anything else.
fn check_role(role: &str) -> AwsResult<()> {
    if role.starts_with("arn:") && role.split(':').count() >= 6 {
        Ok(())
    } else {
        Err(AwsError::new(
            "InvalidArn",
            format!("Invalid Arn: 'Invalid ARN prefix: {role}'"),
        ))
    }
}

impl StepFunctions {
    /// The machine with this unqualified ARN, if it exists.
    pub(super) fn machine(&self, arn: &str) -> AwsResult<Option<Machine>> {
        self.env.store.with(|c| {
            c.prepare_cached(&format!(
                "SELECT {MACHINE_COLUMNS} FROM sfn_machines WHERE arn = ?1"
            ))?
            .query_row([arn], machine_from_row)
            .optional()
            .map_err(AwsError::from)
        })
    }

    /// The machine a state machine ARN names, or StateMachineDoesNotExist.
    fn existing_machine(&self, ctx: &Context, arn_text: &str) -> AwsResult<Machine> {
        let parsed = arn::parse(arn_text)?;
        if !matches!(parsed.target, Target::Machine(_)) {
            return Err(arn::wrong_kind(parsed.target.kind()));
        }
        match self.machine(arn_text)? {
            Some(m) if arn::in_scope(&parsed, ctx) => Ok(m),
            _ => Err(no_machine(arn_text)),
        }
    }

    /// What a StartExecution's `stateMachineArn` runs: the machine, a version, or the
    /// version an alias routes this execution to.
    pub(super) fn runnable(&self, ctx: &Context, arn_text: &str) -> AwsResult<Runnable> {
        let parsed = arn::parse(arn_text)?;
        let base = arn::unqualified(arn_text);
        let machine = match (&parsed.target, self.machine(base)?) {
            (Target::Execution(..) | Target::Activity(_) | Target::MapRun, _) => {
                return Err(arn::wrong_kind(parsed.target.kind()))
            }
            (_, Some(m)) if arn::in_scope(&parsed, ctx) => m,
            _ => return Err(no_machine(arn_text)),
        };
        let (version_arn, alias_arn) = match &parsed.target {
            Target::Version(..) => (Some(arn_text.to_string()), None),
            Target::Alias(..) => {
                let routing = self
                    .alias(arn_text)?
                    .ok_or_else(|| no_machine(arn_text))?
                    .routing;
                (Some(pick_version(&routing)), Some(arn_text.to_string()))
            }
            _ => (None, None),
        };
        let definition = match &version_arn {
            Some(v) => self.version(v)?.ok_or_else(|| no_machine(v))?.definition,
            None => machine.definition.clone(),
        };
        Ok(Runnable {
            machine,
            definition,
            version_arn,
            alias_arn,
        })
    }

    pub(super) fn create_state_machine(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let name = input.str("name").unwrap_or_default();
        arn::check_name(name)?;
        let role = input.str("roleArn").unwrap_or_default();
        check_role(role)?;
        let text = input.str("definition").unwrap_or_default();
        definition::parse(text)?;
        let publish = input.bool("publish").unwrap_or(false);
        if input.get("versionDescription").is_some() && !publish {
            return Err(AwsError::validation(
                "Version description can only be set when publish is true",
            ));
        }
        let machine = Machine {
            arn: arn::machine(ctx, name),
            name: name.to_string(),
            kind: input.str("type").unwrap_or("STANDARD").to_string(),
            definition: text.to_string(),
            role_arn: role.to_string(),
            created: now_millis(),
            revision_id: new_request_id(),
            logging: json_text(input.get("loggingConfiguration"), default_logging()),
            tracing: json_text(input.get("tracingConfiguration"), default_tracing()),
            encryption: json_text(input.get("encryptionConfiguration"), default_encryption()),
        };
        if let Some(existing) = self.machine(&machine.arn)? {
            return self.create_again(existing, &machine, publish);
        }
        self.insert_machine(&machine)?;
        self.set_tags(&machine.arn, input.get("tags"))?;
        let version = match publish {
            true => Some(self.publish(&machine, input.str("versionDescription"))?),
            false => None,
        };
        Ok(Value::map()
            .with("stateMachineArn", machine.arn)
            .with("creationDate", Value::Timestamp(machine.created))
            .with_opt("stateMachineVersionArn", version))
    }

    /// A create of a name that exists: idempotent when nothing differs, else
    /// StateMachineAlreadyExists.
    fn create_again(&self, existing: Machine, wanted: &Machine, publish: bool) -> AwsResult<Value> {
        let same = existing.definition == wanted.definition
            && existing.role_arn == wanted.role_arn
            && existing.kind == wanted.kind
            && existing.logging == wanted.logging
            && existing.tracing == wanted.tracing;
        if !same {
            return Err(AwsError::new(
                "StateMachineAlreadyExists",
                format!("State Machine Already Exists: '{}'", existing.arn),
            ));
        }
        let version = match publish {
            true => Some(self.publish(&existing, None)?),
            false => None,
        };
        Ok(Value::map()
            .with("stateMachineArn", existing.arn)
            .with("creationDate", Value::Timestamp(existing.created))
            .with_opt("stateMachineVersionArn", version))
    }

    fn insert_machine(&self, m: &Machine) -> AwsResult<()> {
        self.env.store.with(|c| {
            c.execute_cached(
                "INSERT INTO sfn_machines (arn, account, region, name, kind, definition, role_arn,
                 created, revision_id, logging, tracing, encryption)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
                params![
                    m.arn,
                    account_of(&m.arn),
                    region_of(&m.arn),
                    m.name,
                    m.kind,
                    m.definition,
                    m.role_arn,
                    m.created,
                    m.revision_id,
                    m.logging,
                    m.tracing,
                    m.encryption
                ],
            )
            .map(|_| ())
            .map_err(AwsError::from)
        })
    }

    pub(super) fn describe_state_machine(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let arn_text = input.str("stateMachineArn").unwrap_or_default();
        let parsed = arn::parse(arn_text)?;
        match &parsed.target {
            Target::Machine(name) if name.contains('/') => self.describe_labelled(ctx, arn_text),
            Target::Machine(_) => Ok(describe(&self.existing_machine(ctx, arn_text)?, None)),
            Target::Version(..) => {
                let version = self
                    .version(arn_text)?
                    .filter(|_| arn::in_scope(&parsed, ctx))
                    .ok_or_else(|| no_machine(arn_text))?;
                let machine = self
                    .machine(arn::unqualified(arn_text))?
                    .ok_or_else(|| no_machine(arn_text))?;
                Ok(describe(&machine, Some(&version)))
            }
            other => Err(arn::wrong_kind(other.kind())),
        }
    }

    /// DescribeStateMachine of `<machine>/<label>`: the item processor of the machine's
    /// Distributed Map state with that `Label`, as its map runs' children run it.
    fn describe_labelled(&self, ctx: &Context, arn_text: &str) -> AwsResult<Value> {
        let (base, label) = arn_text.rsplit_once('/').unwrap_or((arn_text, ""));
        let machine = self
            .existing_machine(ctx, base)
            .map_err(|_| no_machine(arn_text))?;
        let definition: Json = serde_json::from_str(&machine.definition).unwrap_or_default();
        let map = labelled_map(&definition, label).ok_or_else(|| no_machine(arn_text))?;
        let jsonata = definition.get("QueryLanguage").and_then(Json::as_str) == Some("JSONata");
        let child = child_definition(map, jsonata).to_string();
        let mut described = describe(&machine, None);
        described.insert("stateMachineArn", arn_text);
        described.insert("definition", child.as_str());
        described.insert("label", label);
        Ok(described)
    }

    pub(super) fn list_state_machines(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let keyset = Keyset::of(input, false)?;
        let rows = self.env.store.with(|c| {
            let mut stmt = c.prepare_cached(
                "SELECT created, rowid, arn, name, kind FROM sfn_machines
                 WHERE account = ?1 AND region = ?2 AND (created, rowid) > (?3, ?4)
                 ORDER BY created, rowid LIMIT ?5",
            )?;
            let (key, rowid) = keyset.after;
            let params = params![ctx.account, ctx.region, key, rowid, keyset.fetch()];
            let rows = stmt.query_map(params, |r| {
                let created: i64 = r.get(0)?;
                let item = Value::map()
                    .with("stateMachineArn", r.get::<_, String>(2)?)
                    .with("name", r.get::<_, String>(3)?)
                    .with("type", r.get::<_, String>(4)?)
                    .with("creationDate", Value::Timestamp(created));
                Ok((created, r.get(1)?, item))
            })?;
            rows.collect::<rusqlite::Result<Vec<_>>>()
                .map_err(AwsError::from)
        })?;
        let (items, next) = keyset.page(rows);
        Ok(Value::map()
            .with("stateMachines", items)
            .with_opt("nextToken", next))
    }

    pub(super) fn update_state_machine(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let arn_text = input.str("stateMachineArn").unwrap_or_default();
        let mut machine = self.existing_machine(ctx, arn_text)?;
        let fields = [
            "definition",
            "roleArn",
            "loggingConfiguration",
            "tracingConfiguration",
            "encryptionConfiguration",
        ];
        if fields.iter().all(|f| input.get(f).is_none()) {
            return Err(AwsError::new(
                "MissingRequiredParameter",
                "Either the definition, the role ARN, the LoggingConfiguration, the EncryptionConfiguration or the TracingConfiguration must be specified",
            ));
        }
        let publish = input.bool("publish").unwrap_or(false);
        if input.get("versionDescription").is_some() && !publish {
            return Err(AwsError::validation(
                "Version description can only be set when publish is true",
            ));
        }
        if let Some(text) = input.str("definition") {
            definition::parse(text)?;
            machine.definition = text.to_string();
        }
        if let Some(role) = input.str("roleArn") {
            check_role(role)?;
            machine.role_arn = role.to_string();
        }
        for (field, slot) in [
            ("loggingConfiguration", &mut machine.logging),
            ("tracingConfiguration", &mut machine.tracing),
            ("encryptionConfiguration", &mut machine.encryption),
        ] {
            if let Some(v) = input.get(field) {
                *slot = v.to_json().to_string();
            }
        }
        machine.revision_id = new_request_id();
        let updated = now_millis();
        self.env.store.with(|c| {
            c.execute_cached(
                "UPDATE sfn_machines SET definition = ?2, role_arn = ?3, logging = ?4, tracing = ?5,
                 encryption = ?6, revision_id = ?7 WHERE arn = ?1",
                params![machine.arn, machine.definition, machine.role_arn, machine.logging,
                        machine.tracing, machine.encryption, machine.revision_id],
            )
            .map_err(AwsError::from)
        })?;
        let version = match publish {
            true => Some(self.publish(&machine, input.str("versionDescription"))?),
            false => None,
        };
        Ok(Value::map()
            .with("updateDate", Value::Timestamp(updated))
            .with("revisionId", machine.revision_id)
            .with_opt("stateMachineVersionArn", version))
    }

    pub(super) fn delete_state_machine(&self, _ctx: &Context, input: &Value) -> AwsResult<Value> {
        let arn_text = input.str("stateMachineArn").unwrap_or_default();
        let parsed = arn::parse(arn_text)?;
        match parsed.target {
            Target::Machine(_) => self.env.store.transaction(|tx| {
                tx.execute_cached("DELETE FROM sfn_machines WHERE arn = ?1", [arn_text])?;
                tx.execute_cached(
                    "DELETE FROM sfn_versions WHERE machine_arn = ?1",
                    [arn_text],
                )?;
                tx.execute_cached("DELETE FROM sfn_aliases WHERE machine_arn = ?1", [arn_text])?;
                tx.execute_cached("DELETE FROM sfn_tags WHERE arn = ?1", [arn_text])?;
                Ok::<_, AwsError>(())
            })?,
            Target::Version(..) => self.delete_version(arn_text)?,
            other => return Err(arn::wrong_kind(other.kind())),
        }
        Ok(Value::map())
    }

    /// Publishes the machine's current revision, or answers the version that already holds
    /// it.
    fn publish(&self, m: &Machine, description: Option<&str>) -> AwsResult<String> {
        self.env.store.transaction(|tx| {
            let existing: Option<String> = tx
                .query_row_cached(
                    "SELECT arn FROM sfn_versions WHERE machine_arn = ?1 AND revision_id = ?2",
                    [&m.arn, &m.revision_id],
                    |r| r.get(0),
                )
                .optional()?;
            if let Some(arn) = existing {
                return Ok(arn);
            }
            let number: i64 = tx.query_row_cached(
                "UPDATE sfn_machines SET next_version = next_version + 1 WHERE arn = ?1
                 RETURNING next_version - 1",
                [&m.arn],
                |r| r.get(0),
            )?;
            let arn = format!("{}:{number}", m.arn);
            tx.execute_cached(
                "INSERT INTO sfn_versions (arn, machine_arn, version, definition, role_arn, created,
                 revision_id, description) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                params![arn, m.arn, number, m.definition, m.role_arn, now_millis(), m.revision_id, description],
            )?;
            Ok::<_, AwsError>(arn)
        })
    }

    pub(super) fn publish_state_machine_version(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        let machine =
            self.existing_machine(ctx, input.str("stateMachineArn").unwrap_or_default())?;
        if let Some(wanted) = input.str("revisionId") {
            if wanted != machine.revision_id {
                return Err(AwsError::new(
                    "ConflictException",
                    format!(
                        "Failed to publish the State Machine version for revision {wanted}. The current State Machine revision is {}.",
                        machine.revision_id
                    ),
                ));
            }
        }
        let arn = self.publish(&machine, input.str("description"))?;
        let version = self.version(&arn)?.ok_or_else(|| no_machine(&arn))?;
        Ok(Value::map()
            .with("stateMachineVersionArn", arn)
            .with("creationDate", Value::Timestamp(version.created)))
    }

    pub(super) fn list_state_machine_versions(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        let machine =
            self.existing_machine(ctx, input.str("stateMachineArn").unwrap_or_default())?;
        let items: Vec<Value> = self.env.store.with(|c| {
            let mut stmt = c.prepare_cached(
                "SELECT arn, created FROM sfn_versions WHERE machine_arn = ?1 ORDER BY version DESC",
            )?;
            let rows = stmt.query_map([&machine.arn], |r| {
                Ok(Value::map()
                    .with("stateMachineVersionArn", r.get::<_, String>(0)?)
                    .with("creationDate", Value::Timestamp(r.get(1)?)))
            })?;
            rows.collect::<rusqlite::Result<Vec<_>>>().map_err(AwsError::from)
        })?;
        let (items, next) = page(items, page_size(input), input.str("nextToken"), bad_token)?;
        Ok(Value::map()
            .with("stateMachineVersions", items)
            .with_opt("nextToken", next))
    }

    pub(super) fn delete_state_machine_version(
        &self,
        _ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        let arn_text = input.str("stateMachineVersionArn").unwrap_or_default();
        match arn::parse(arn_text)?.target {
            Target::Version(..) => self.delete_version(arn_text)?,
            other => return Err(arn::wrong_kind(other.kind())),
        }
        Ok(Value::map())
    }

    /// Deletes a version, unless an alias routes to it (ConflictException).
    fn delete_version(&self, arn_text: &str) -> AwsResult<()> {
        let machine_arn = arn::unqualified(arn_text);
        let referencing: Vec<String> = self
            .aliases_of(machine_arn)?
            .into_iter()
            .filter(|a| a.routing.iter().any(|(v, _)| v == arn_text))
            .map(|a| a.name)
            .collect();
        if !referencing.is_empty() {
            return Err(AwsError::new(
                "ConflictException",
                format!(
                    "Version to be deleted must not be referenced by an alias. Current list of aliases referencing this version: [{}]",
                    referencing.join(", ")
                ),
            ));
        }
        self.env.store.with(|c| {
            c.execute_cached("DELETE FROM sfn_versions WHERE arn = ?1", [arn_text])
                .map(|_| ())
                .map_err(AwsError::from)
        })
    }

    /// A published version, if it exists.
    pub(super) fn version(&self, arn: &str) -> AwsResult<Option<Version>> {
        self.env.store.with(|c| {
            c.prepare_cached(
                "SELECT definition, role_arn, created, revision_id, description FROM sfn_versions WHERE arn = ?1",
            )?
            .query_row([arn], |r| {
                Ok(Version {
                    arn: arn.to_string(),
                    definition: r.get(0)?,
                    role_arn: r.get(1)?,
                    created: r.get(2)?,
                    revision_id: r.get(3)?,
                    description: r.get(4)?,
                })
            })
            .optional()
            .map_err(AwsError::from)
        })
    }
}

/// A published version as stored.
#[derive(Debug, Clone)]
pub(super) struct Version {
    arn: String,
    pub definition: String,
    role_arn: String,
    created: EpochMillis,
    revision_id: String,
    description: Option<String>,
}

/// DescribeStateMachine's output for a machine, or for one of its versions.
fn describe(m: &Machine, version: Option<&Version>) -> Value {
    let (arn, definition, role, created, revision, description) = match version {
        Some(v) => (
            &v.arn,
            &v.definition,
            &v.role_arn,
            v.created,
            &v.revision_id,
            v.description.clone(),
        ),
        None => (
            &m.arn,
            &m.definition,
            &m.role_arn,
            m.created,
            &m.revision_id,
            None,
        ),
    };
    Value::map()
        .with("stateMachineArn", arn.as_str())
        .with("name", m.name.as_str())
        .with("status", "ACTIVE")
        .with("definition", definition.as_str())
        .with("roleArn", role.as_str())
        .with("type", m.kind.as_str())
        .with("creationDate", Value::Timestamp(created))
        .with("loggingConfiguration", stored(&m.logging))
        .with("tracingConfiguration", stored(&m.tracing))
        .with("encryptionConfiguration", stored(&m.encryption))
        .with("revisionId", revision.as_str())
        .with_opt("description", description)
}

/// The Distributed Map state labelled `label` among a set of states (a definition, a
/// branch, an item processor), at any depth.
fn labelled_map<'a>(states: &'a Json, label: &str) -> Option<&'a Json> {
    states
        .get("States")?
        .as_object()?
        .values()
        .find_map(|state| {
            if state.get("Type").and_then(Json::as_str) == Some("Map")
                && state.get("Label").and_then(Json::as_str) == Some(label)
            {
                return Some(state);
            }
            let branches = state.get("Branches").and_then(Json::as_array);
            let inner = ["ItemProcessor", "Iterator"].map(|k| state.get(k));
            branches
                .into_iter()
                .flatten()
                .chain(inner.into_iter().flatten())
                .find_map(|b| labelled_map(b, label))
        })
}

/// A state machine's DescribeStateMachineForExecution view of a run definition.
pub(super) fn describe_for_execution(m: &Machine, definition: &str) -> Value {
    Value::map()
        .with("stateMachineArn", m.arn.as_str())
        .with("name", m.name.as_str())
        .with("definition", definition)
        .with("roleArn", m.role_arn.as_str())
        .with("updateDate", Value::Timestamp(m.created))
        .with("loggingConfiguration", stored(&m.logging))
        .with("tracingConfiguration", stored(&m.tracing))
        .with("encryptionConfiguration", stored(&m.encryption))
        .with("revisionId", m.revision_id.as_str())
}

fn account_of(arn: &str) -> &str {
    arn.split(':').nth(4).unwrap_or_default()
}

fn region_of(arn: &str) -> &str {
    arn.split(':').nth(3).unwrap_or_default()
}

/// An alias as stored.
#[derive(Debug, Clone)]
pub(super) struct Alias {
    arn: String,
    name: String,
    description: Option<String>,
    /// (version ARN, weight) pairs.
    pub routing: Vec<(String, i64)>,
    created: EpochMillis,
    updated: EpochMillis,
}

fn alias_from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Alias> {
    let routing: String = r.get(3)?;
    Ok(Alias {
        arn: r.get(0)?,
        name: r.get(1)?,
        description: r.get(2)?,
        routing: serde_json::from_str(&routing).unwrap_or_default(),
        created: r.get(4)?,
        updated: r.get(5)?,
    })
}

/// The version an alias sends this execution to, by the routing weights.
fn pick_version(routing: &[(String, i64)]) -> String {
    let total: i64 = routing.iter().map(|(_, w)| *w).sum();
    let mut roll = fastrand::i64(0..total.max(1));
    for (version, weight) in routing {
        if roll < *weight {
            return version.clone();
        }
        roll -= weight;
    }
    routing.first().map(|(v, _)| v.clone()).unwrap_or_default()
}

fn routing_value(routing: &[(String, i64)]) -> Value {
    Value::List(
        routing
            .iter()
            .map(|(v, w)| {
                Value::map()
                    .with("stateMachineVersionArn", v.as_str())
                    .with("weight", *w)
            })
            .collect(),
    )
}

impl StepFunctions {
    fn alias(&self, arn: &str) -> AwsResult<Option<Alias>> {
        self.env.store.with(|c| {
            c.prepare_cached(
                "SELECT arn, name, description, routing, created, updated FROM sfn_aliases WHERE arn = ?1",
            )?
            .query_row([arn], alias_from_row)
            .optional()
            .map_err(AwsError::from)
        })
    }

    fn aliases_of(&self, machine_arn: &str) -> AwsResult<Vec<Alias>> {
        self.env.store.with(|c| {
            let mut stmt = c.prepare_cached(
                "SELECT arn, name, description, routing, created, updated FROM sfn_aliases
                 WHERE machine_arn = ?1 ORDER BY name",
            )?;
            let rows = stmt.query_map([machine_arn], alias_from_row)?;
            rows.collect::<rusqlite::Result<Vec<_>>>()
                .map_err(AwsError::from)
        })
    }

    /// Checks a routing configuration: one or two versions of one machine, that exist,
    /// with weights that add up to 100. Answers the machine's ARN.
    fn check_routing(&self, ctx: &Context, routing: &[(String, i64)]) -> AwsResult<String> {
        let Some((first, _)) = routing.first() else {
            return Err(AwsError::validation(
                "Routing configuration must contain one or two versions",
            ));
        };
        let machine_arn = arn::unqualified(first).to_string();
        for (version, _) in routing {
            let parsed = arn::parse(version)?;
            if !matches!(parsed.target, Target::Version(..)) {
                return Err(arn::wrong_kind(parsed.target.kind()));
            }
            if arn::unqualified(version) != machine_arn {
                return Err(AwsError::validation(
                    "Routing configuration must contain state machine version ARNs of the same state machine",
                ));
            }
            if self.version(version)?.is_none() || !arn::in_scope(&parsed, ctx) {
                return Err(not_found(version));
            }
        }
        if routing.len() == 2 && routing[0].0 == routing[1].0 {
            return Err(AwsError::validation(
                "Routing configuration must contain distinct version ARNs",
            ));
        }
        if routing.iter().map(|(_, w)| w).sum::<i64>() != 100 {
            return Err(AwsError::validation(
                "Sum of routing configuration weights must be equal to 100",
            ));
        }
        Ok(machine_arn)
    }

    pub(super) fn create_state_machine_alias(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        let name = input.str("name").unwrap_or_default();
        arn::check_name(name)?;
        if name.parse::<i64>().is_ok() {
            return Err(AwsError::new(
                "InvalidName",
                format!("Invalid Name: '{name}'"),
            ));
        }
        let routing = routing_of(input);
        let machine_arn = self.check_routing(ctx, &routing)?;
        let alias_arn = format!("{machine_arn}:{name}");
        let description = input.str("description").map(str::to_string);
        if let Some(existing) = self.alias(&alias_arn)? {
            if existing.routing == routing && existing.description == description {
                return Ok(Value::map()
                    .with("stateMachineAliasArn", existing.arn)
                    .with("creationDate", Value::Timestamp(existing.created)));
            }
            return Err(AwsError::new(
                "ConflictException",
                format!("Failed to create alias because an alias with the same name and a different routing configuration already exists: '{alias_arn}'"),
            ));
        }
        let now = now_millis();
        self.env.store.with(|c| {
            c.execute_cached(
                "INSERT INTO sfn_aliases (arn, machine_arn, name, description, routing, created, updated)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?6)",
                params![alias_arn, machine_arn, name, description, routing_json(&routing), now],
            )
            .map_err(AwsError::from)
        })?;
        Ok(Value::map()
            .with("stateMachineAliasArn", alias_arn)
            .with("creationDate", Value::Timestamp(now)))
    }

    fn existing_alias(&self, ctx: &Context, arn_text: &str) -> AwsResult<Alias> {
        let parsed = arn::parse(arn_text)?;
        if !matches!(parsed.target, Target::Alias(..)) {
            return Err(arn::wrong_kind(parsed.target.kind()));
        }
        self.alias(arn_text)?
            .filter(|_| arn::in_scope(&parsed, ctx))
            .ok_or_else(|| not_found(arn_text))
    }

    pub(super) fn describe_state_machine_alias(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        let alias =
            self.existing_alias(ctx, input.str("stateMachineAliasArn").unwrap_or_default())?;
        Ok(Value::map()
            .with("stateMachineAliasArn", alias.arn)
            .with("name", alias.name)
            .with_opt("description", alias.description)
            .with("routingConfiguration", routing_value(&alias.routing))
            .with("creationDate", Value::Timestamp(alias.created))
            .with("updateDate", Value::Timestamp(alias.updated)))
    }

    pub(super) fn update_state_machine_alias(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        let mut alias =
            self.existing_alias(ctx, input.str("stateMachineAliasArn").unwrap_or_default())?;
        if input.get("description").is_none() && input.get("routingConfiguration").is_none() {
            return Err(AwsError::new(
                "MissingRequiredParameter",
                "Either the description or the RoutingConfiguration must be specified",
            ));
        }
        if input.get("routingConfiguration").is_some() {
            alias.routing = routing_of(input);
            self.check_routing(ctx, &alias.routing)?;
        }
        if let Some(d) = input.str("description") {
            alias.description = Some(d.to_string());
        }
        let now = now_millis();
        self.env.store.with(|c| {
            c.execute_cached(
                "UPDATE sfn_aliases SET description = ?2, routing = ?3, updated = ?4 WHERE arn = ?1",
                params![alias.arn, alias.description, routing_json(&alias.routing), now],
            )
            .map_err(AwsError::from)
        })?;
        Ok(Value::map().with("updateDate", Value::Timestamp(now)))
    }

    pub(super) fn delete_state_machine_alias(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        let arn_text = input.str("stateMachineAliasArn").unwrap_or_default();
        let parsed = arn::parse(arn_text)?;
        if !matches!(parsed.target, Target::Alias(..)) {
            return Err(arn::wrong_kind(parsed.target.kind()));
        }
        let _ = ctx;
        self.env.store.with(|c| {
            c.execute_cached("DELETE FROM sfn_aliases WHERE arn = ?1", [arn_text])
                .map_err(AwsError::from)
        })?;
        Ok(Value::map())
    }

    pub(super) fn list_state_machine_aliases(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        let machine =
            self.existing_machine(ctx, input.str("stateMachineArn").unwrap_or_default())?;
        let items: Vec<Value> = self
            .aliases_of(&machine.arn)?
            .into_iter()
            .map(|a| {
                Value::map()
                    .with("stateMachineAliasArn", a.arn)
                    .with("creationDate", Value::Timestamp(a.created))
            })
            .collect();
        let (items, next) = page(items, page_size(input), input.str("nextToken"), bad_token)?;
        Ok(Value::map()
            .with("stateMachineAliases", items)
            .with_opt("nextToken", next))
    }
}

fn routing_of(input: &Value) -> Vec<(String, i64)> {
    input
        .get("routingConfiguration")
        .and_then(Value::as_list)
        .unwrap_or_default()
        .iter()
        .map(|r| {
            (
                r.str("stateMachineVersionArn")
                    .unwrap_or_default()
                    .to_string(),
                r.int("weight").unwrap_or_default(),
            )
        })
        .collect()
}

fn routing_json(routing: &[(String, i64)]) -> String {
    serde_json::to_string(routing).unwrap_or_else(|_| "[]".into())
}
