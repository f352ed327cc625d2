//! Automation: executions of runbooks and Change Manager change requests, execution
//! previews, document reviews, and Change Calendar states.
//!
//! Roto does not run Automation runbooks: an execution of a runbook that exists is
//! recorded, answered by Get and Describe, and `Failed` at once with a message saying so, so
//! that a caller waiting on it stops; a runbook that does not exist is refused as AWS
//! refuses it. A preview counts the runbook's steps; a calendar's state is read from its
//! iCalendar content (its default and the events that cover the time asked).

use roto_core::timestamp::{self, now_millis, TimestampFormat};
use roto_core::{AwsError, AwsResult, Context, Value};

use super::records::{caller, paged, strings, Kind};
use super::Ssm;
use crate::ids;

const EXECUTION: Kind<'static> = Kind::top("automation-execution");
const PREVIEW: Kind<'static> = Kind::top("execution-preview");
const REVIEWS: &str = "document-reviews";

/// Why every execution fails.
const NOT_RUN: &str =
    "Roto does not run Automation runbooks; the execution was recorded and not run.";

/// The members an execution keeps from its Start request.
const START_MEMBERS: &[&str] = &[
    "DocumentVersion",
    "Parameters",
    "Mode",
    "TargetParameterName",
    "Targets",
    "TargetMaps",
    "MaxConcurrency",
    "MaxErrors",
    "TargetLocations",
    "AlarmConfiguration",
    "ScheduledTime",
    "Runbooks",
    "ChangeRequestName",
];

pub(super) fn execution_missing(input: &Value) -> AwsError {
    let id = input.str("AutomationExecutionId").unwrap_or_default();
    AwsError::new(
        "AutomationExecutionNotFoundException",
        format!("Automation execution {id} does not exist."),
    )
}

fn definition_missing(name: &str) -> AwsError {
    AwsError::new(
        "AutomationDefinitionNotFoundException",
        format!("Document {name} does not exist or is not an Automation document."),
    )
}

/// A document name without the ARN around it.
fn bare(name: &str) -> &str {
    name.rsplit_once(":document/").map_or(name, |(_, n)| n)
}

impl Ssm {
    /// The type of the document `name` (AWS's shared `AWS-*` runbooks are Automation).
    fn document_type(&self, ctx: &Context, name: &str) -> Option<String> {
        if name.starts_with("AWS-") || name.starts_with("AWSSupport-") {
            return Some("Automation".to_string());
        }
        self.document_head(ctx, name)
            .ok()
            .and_then(|h| h.str("DocumentType").map(str::to_string))
    }

    /// Records a failed execution of the runbook the input names, of `subtype` if any.
    fn record_execution(
        &self,
        ctx: &Context,
        input: &Value,
        expected: &str,
        subtype: Option<&str>,
    ) -> AwsResult<Value> {
        let name = bare(input.str("DocumentName").unwrap_or_default());
        if self.document_type(ctx, name).as_deref() != Some(expected) {
            return Err(definition_missing(name));
        }
        let id = ids::uuid();
        let now = Value::Timestamp(now_millis());
        let mut execution = Value::map()
            .with("AutomationExecutionId", id.as_str())
            .with("DocumentName", name)
            .with("DocumentVersion", "$DEFAULT")
            .with("Mode", "Auto")
            .with("AutomationType", "Local")
            .with("ExecutionStartTime", now.clone())
            .with("ExecutionEndTime", now)
            .with("AutomationExecutionStatus", "Failed")
            .with("FailureMessage", NOT_RUN)
            .with("StepExecutions", Vec::<Value>::new())
            .with("Outputs", Value::map())
            .with("ExecutedBy", caller(ctx))
            .with_opt("AutomationSubtype", subtype);
        super::windows::merge(&mut execution, input, START_MEMBERS, &[], false);
        self.save(ctx, EXECUTION, &id, &execution)?;
        Ok(Value::map().with("AutomationExecutionId", id))
    }

    pub(super) fn start_automation_execution(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        self.record_execution(ctx, input, "Automation", None)
    }

    pub(super) fn start_change_request_execution(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        self.record_execution(
            ctx,
            input,
            "Automation.ChangeTemplate",
            Some("ChangeRequest"),
        )
    }

    fn execution(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let id = input.str("AutomationExecutionId").unwrap_or_default();
        self.record_as(ctx, EXECUTION, id, "AutomationExecution")?
            .ok_or_else(|| execution_missing(input))
    }

    pub(super) fn get_automation_execution(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        Ok(Value::map().with("AutomationExecution", self.execution(ctx, input)?))
    }

    pub(super) fn describe_automation_executions(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        let filters = input
            .get("Filters")
            .and_then(Value::as_list)
            .unwrap_or_default();
        let executions: Vec<Value> = self
            .records_as(ctx, EXECUTION, "AutomationExecutionMetadata")?
            .into_iter()
            .filter(|e| filters.iter().all(|f| execution_keeps(e, f)))
            .collect();
        paged(input, executions, "AutomationExecutionMetadataList", 50)
    }

    pub(super) fn describe_automation_step_executions(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        self.execution(ctx, input)?;
        Ok(Value::map().with("StepExecutions", Vec::<Value>::new()))
    }

    /// StopAutomationExecution and SendAutomationSignal: an execution here has always
    /// finished, so neither has anything to act on.
    pub(super) fn finished_execution(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let execution = self.execution(ctx, input)?;
        let id = execution.str("AutomationExecutionId").unwrap_or_default();
        Err(AwsError::new(
            if input.get("SignalType").is_some() {
                "InvalidAutomationSignalException"
            } else {
                "InvalidAutomationStatusUpdateException"
            },
            format!("Automation execution {id} has already finished."),
        ))
    }

    pub(super) fn start_execution_preview(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let name = input.str("DocumentName").unwrap_or_default();
        let head = self
            .document_head(ctx, name)
            .map_err(|_| AwsError::validation(format!("Document {name} does not exist.")))?;
        if head.str("DocumentType") != Some("Automation") {
            return Err(AwsError::validation(format!(
                "Document {name} is not an Automation document."
            )));
        }
        let content = self
            .get_document(ctx, &Value::map().with("Name", name))?
            .str("Content")
            .unwrap_or_default()
            .to_string();
        let steps = serde_json::from_str::<serde_json::Value>(&content)
            .ok()
            .and_then(|c| c.get("mainSteps").and_then(|s| s.as_array()).map(Vec::len))
            .unwrap_or(0);
        let id = ids::uuid();
        let automation = Value::map()
            .with(
                "StepPreviews",
                Value::map().with("Undetermined", steps as i64),
            )
            .with("Regions", vec![Value::from(ctx.region.as_str())])
            .with("TargetPreviews", Vec::<Value>::new())
            .with("TotalAccounts", 1);
        let preview = Value::map()
            .with("ExecutionPreviewId", id.as_str())
            .with("EndedAt", Value::Timestamp(now_millis()))
            .with("Status", "Success")
            .with(
                "ExecutionPreview",
                Value::map().with("Automation", automation),
            );
        self.save(ctx, PREVIEW, &id, &preview)?;
        Ok(Value::map().with("ExecutionPreviewId", id))
    }

    pub(super) fn get_execution_preview(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let id = input.str("ExecutionPreviewId").unwrap_or_default();
        self.record_as(ctx, PREVIEW, id, "GetExecutionPreviewResponse")?
            .ok_or_else(|| {
                AwsError::new(
                    "ResourceNotFoundException",
                    "The specified resource does not exist.",
                )
            })
    }

    pub(super) fn update_document_metadata(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        let name = input.str("Name").unwrap_or_default();
        let head = self.document_head(ctx, name)?;
        if head.str("DocumentType") != Some("Automation.ChangeTemplate") {
            return Err(AwsError::new(
                "InvalidDocumentOperation",
                "Only change template documents can be reviewed.",
            ));
        }
        let review = input
            .get("DocumentReviews")
            .cloned()
            .unwrap_or_else(Value::map);
        let status = match review.str("Action") {
            Some("Approve") => "APPROVED",
            Some("Reject") => "REJECTED",
            _ => "PENDING",
        };
        let now = Value::Timestamp(now_millis());
        let response = Value::map()
            .with("CreateTime", now.clone())
            .with("UpdatedTime", now)
            .with("ReviewStatus", status)
            .with(
                "Comment",
                review
                    .get("Comment")
                    .cloned()
                    .unwrap_or(Value::List(Vec::new())),
            )
            .with("Reviewer", caller(ctx));
        let kind = Kind::under(REVIEWS, name);
        let version = input.str("DocumentVersion").unwrap_or("$DEFAULT");
        let mut responses = self
            .record(ctx, kind, version)?
            .and_then(|r| {
                r.get("ReviewerResponse")
                    .and_then(Value::as_list)
                    .map(<[Value]>::to_vec)
            })
            .unwrap_or_default();
        responses.push(response);
        self.save(
            ctx,
            kind,
            version,
            &Value::map().with("ReviewerResponse", responses),
        )?;
        Ok(Value::map())
    }

    pub(super) fn list_document_metadata_history(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        let name = input.str("Name").unwrap_or_default();
        let head = self.document_head(ctx, name)?;
        let version = input.str("DocumentVersion").unwrap_or("$DEFAULT");
        let responses = self
            .record(ctx, Kind::under(REVIEWS, name), version)?
            .unwrap_or_else(|| Value::map().with("ReviewerResponse", Vec::<Value>::new()));
        let metadata = crate::documents::shaped(
            super::SPEC.model(),
            "DocumentMetadataResponseInfo",
            &crate::documents::document(&responses),
        )?;
        Ok(Value::map()
            .with("Name", name)
            .with("DocumentVersion", version)
            .with_opt("Author", head.str("Owner"))
            .with("Metadata", metadata))
    }

    pub(super) fn get_calendar_state(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let at = match input.str("AtTime") {
            Some(text) => timestamp::parse(text).ok_or_else(|| {
                AwsError::validation(format!("AtTime {text} is not an ISO 8601 time."))
            })?,
            None => now_millis(),
        };
        let (mut open, mut next) = (true, None::<i64>);
        for name in strings(input, "CalendarNames") {
            let name = bare(name);
            if self.document_type(ctx, name).as_deref() != Some("ChangeCalendar") {
                self.document_head(ctx, name)?;
                return Err(AwsError::new(
                    "InvalidDocumentType",
                    format!("Document {name} is not a change calendar."),
                ));
            }
            let document = self.get_document(ctx, &Value::map().with("Name", name))?;
            let calendar = Calendar::read(document.str("Content").unwrap_or_default());
            open &= calendar.open_at(at);
            if let Some(t) = calendar.next_transition(at) {
                next = Some(next.map_or(t, |n| n.min(t)));
            }
        }
        let iso = |t: i64| timestamp::format(t, TimestampFormat::Iso8601);
        Ok(Value::map()
            .with("State", if open { "OPEN" } else { "CLOSED" })
            .with("AtTime", iso(at))
            .with_opt("NextTransitionTime", next.map(iso)))
    }
}

/// Whether an execution passes one DescribeAutomationExecutions filter.
fn execution_keeps(execution: &Value, filter: &Value) -> bool {
    let values = strings(filter, "Values");
    let field = |member: &str| execution.str(member).unwrap_or_default();
    match filter.str("Key").unwrap_or_default() {
        "DocumentNamePrefix" => values.iter().any(|p| field("DocumentName").starts_with(p)),
        "ExecutionStatus" => values.contains(&field("AutomationExecutionStatus")),
        "ExecutionId" => values.contains(&field("AutomationExecutionId")),
        "AutomationType" => values.contains(&field("AutomationType")),
        "AutomationSubtype" => values.contains(&field("AutomationSubtype")),
        _ => true,
    }
}

/// A Change Calendar's iCalendar content: whether it is open by default, and its events'
/// spans (UTC, epoch milliseconds).
struct Calendar {
    default_open: bool,
    events: Vec<(i64, i64)>,
}

impl Calendar {
    fn read(content: &str) -> Calendar {
        let mut calendar = Calendar {
            default_open: !content.contains("X-CALENDAR-TYPE:DEFAULT_CLOSED"),
            events: Vec::new(),
        };
        let mut start = None;
        for line in content.lines().map(str::trim) {
            let value = line.rsplit_once(':').map(|(_, v)| v);
            if line.starts_with("DTSTART") {
                start = value.and_then(ical_time);
            } else if line.starts_with("DTEND") {
                if let (Some(s), Some(e)) = (start.take(), value.and_then(ical_time)) {
                    calendar.events.push((s, e));
                }
            }
        }
        calendar
    }

    /// An event flips the calendar's default state while it lasts.
    fn open_at(&self, at: i64) -> bool {
        let in_event = self.events.iter().any(|(s, e)| *s <= at && at < *e);
        self.default_open != in_event
    }

    fn next_transition(&self, at: i64) -> Option<i64> {
        self.events
            .iter()
            .flat_map(|(s, e)| [*s, *e])
            .filter(|t| *t > at)
            .min()
    }
}

/// An iCalendar date-time (`20240101T090000Z`, or a date `20240101`), read as UTC.
fn ical_time(text: &str) -> Option<i64> {
    let t = text.trim_end_matches('Z');
    if !t.is_ascii() {
        return None;
    }
    let (date, time) = t.split_once('T').unwrap_or((t, "000000"));
    if date.len() != 8 || time.len() < 6 {
        return None;
    }
    timestamp::parse(&format!(
        "{}-{}-{}T{}:{}:{}Z",
        &date[..4],
        &date[4..6],
        &date[6..8],
        &time[..2],
        &time[2..4],
        &time[4..6]
    ))
}
