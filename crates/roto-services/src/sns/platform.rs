//! SNS mobile push and SMS settings: platform applications, their endpoints and the
//! account's SMS attributes.
//!
//! AWS forwards push messages to APNs, FCM and the other platforms; Roto stores the
//! applications and endpoints with AWS's rules (one endpoint per token, disabled endpoints
//! refuse publishes) and records each push in the trace instead of sending it, as it does
//! for SMS.

use std::collections::BTreeMap;

use roto_core::dispatch::new_request_id;
use roto_core::store::Cached;
use roto_core::{AwsError, AwsResult, Context, Value};
use rusqlite::{params, Connection, OptionalExtension};

use super::store::{json_map, to_json};
use super::{deliveries, invalid, not_found, page, required, string_list, string_map, Sns};

/// The schema, created idempotently at start.
pub const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS sns_platform_applications (
    arn TEXT PRIMARY KEY,
    account TEXT NOT NULL,
    region TEXT NOT NULL,
    attributes TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS sns_platform_endpoints (
    arn TEXT PRIMARY KEY,
    application_arn TEXT NOT NULL,
    token TEXT NOT NULL,
    attributes TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS sns_platform_endpoints_by_token
    ON sns_platform_endpoints (application_arn, token);
CREATE TABLE IF NOT EXISTS sns_sms_attributes (
    account TEXT NOT NULL,
    region TEXT NOT NULL,
    attributes TEXT NOT NULL,
    PRIMARY KEY (account, region)
);
";

/// The push platforms `CreatePlatformApplication` accepts.
const PLATFORMS: &[&str] = &[
    "ADM",
    "APNS",
    "APNS_SANDBOX",
    "APNS_VOIP",
    "APNS_VOIP_SANDBOX",
    "BAIDU",
    "GCM",
    "MACOS",
    "MACOS_SANDBOX",
    "MPNS",
    "WNS",
];

/// Attributes AWS accepts on a platform application but never returns.
const SECRET_ATTRIBUTES: &[&str] = &["PlatformCredential", "PlatformPrincipal"];

/// Page size of the platform listings.
const PAGE_SIZE: usize = 100;

type Attributes = BTreeMap<String, String>;

fn attributes_value(attributes: &Attributes) -> Value {
    Value::Map(
        attributes
            .iter()
            .map(|(k, v)| (k.clone(), Value::from(v)))
            .collect(),
    )
}

fn find_attributes(c: &Connection, table: &str, arn: &str) -> rusqlite::Result<Option<Attributes>> {
    c.prepare_cached(&format!("SELECT attributes FROM {table} WHERE arn = ?1"))?
        .query_row([arn], |r| r.get(0))
        .optional()
        .map(|a| a.map(json_map))
}

fn set_attributes(
    c: &Connection,
    table: &str,
    arn: &str,
    attributes: &Attributes,
) -> rusqlite::Result<()> {
    c.prepare_cached(&format!(
        "UPDATE {table} SET attributes = ?2 WHERE arn = ?1"
    ))?
    .execute(params![arn, to_json(attributes)])
    .map(drop)
}

/// The platform and application name of `arn:aws:sns:<region>:<account>:app/<platform>/<name>`.
fn application_parts(arn: &str) -> Option<(&str, &str)> {
    let resource = arn.splitn(6, ':').nth(5)?;
    let mut parts = resource.splitn(3, '/');
    match (parts.next(), parts.next(), parts.next()) {
        (Some("app"), Some(platform), Some(name)) => Some((platform, name)),
        _ => None,
    }
}

/// `+` and up to 15 digits, else AWS's `PhoneNumber` error.
pub(super) fn check_phone_number(number: &str) -> AwsResult<()> {
    let digits = number.strip_prefix('+').unwrap_or(number);
    if digits.is_empty() || digits.len() > 15 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(invalid("PhoneNumber Reason: input incorrectly formatted"));
    }
    Ok(())
}

impl Sns {
    fn application(&self, arn: &str) -> AwsResult<Attributes> {
        self.env
            .store
            .with(|c| find_attributes(c, "sns_platform_applications", arn).map_err(AwsError::from))?
            .ok_or_else(|| not_found("PlatformApplication does not exist"))
    }

    fn endpoint(&self, arn: &str) -> AwsResult<Attributes> {
        self.env
            .store
            .with(|c| find_attributes(c, "sns_platform_endpoints", arn).map_err(AwsError::from))?
            .ok_or_else(|| not_found("Endpoint does not exist"))
    }

    pub(super) fn create_platform_application(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        let name = required(input, "Name")?;
        let platform = required(input, "Platform")?;
        let name_ok = name.len() <= 256
            && name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"_-.".contains(&b));
        if !name_ok {
            return Err(invalid("Invalid Name"));
        }
        if !PLATFORMS.contains(&platform) {
            return Err(invalid("Platform Reason: Invalid Platform"));
        }
        let mut attributes = string_map(input, "Attributes");
        attributes
            .entry("Enabled".into())
            .or_insert_with(|| "true".into());
        let arn = format!(
            "arn:aws:sns:{}:{}:app/{platform}/{name}",
            ctx.region, ctx.account
        );
        self.env.store.with(|c| {
            c.prepare_cached(
                "INSERT INTO sns_platform_applications (arn, account, region, attributes)
                 VALUES (?1, ?2, ?3, ?4)
                 ON CONFLICT (arn) DO UPDATE SET attributes = excluded.attributes",
            )?
            .execute(params![arn, ctx.account, ctx.region, to_json(&attributes)])
            .map_err(AwsError::from)
        })?;
        Ok(Value::map().with("PlatformApplicationArn", arn))
    }

    pub(super) fn get_platform_application_attributes(&self, input: &Value) -> AwsResult<Value> {
        let mut attributes = self.application(required(input, "PlatformApplicationArn")?)?;
        attributes.retain(|k, _| !SECRET_ATTRIBUTES.contains(&k.as_str()));
        Ok(Value::map().with("Attributes", attributes_value(&attributes)))
    }

    pub(super) fn set_platform_application_attributes(&self, input: &Value) -> AwsResult<Value> {
        let arn = required(input, "PlatformApplicationArn")?;
        let mut attributes = self.application(arn)?;
        attributes.extend(string_map(input, "Attributes"));
        self.env.store.with(|c| {
            set_attributes(c, "sns_platform_applications", arn, &attributes).map_err(AwsError::from)
        })?;
        Ok(Value::map())
    }

    pub(super) fn list_platform_applications(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        let after = input.str("NextToken").unwrap_or_default();
        let applications: Vec<(String, Attributes)> = self.env.store.with(|c| {
            let mut stmt = c.prepare_cached(
                "SELECT arn, attributes FROM sns_platform_applications
                 WHERE account = ?1 AND region = ?2 AND arn > ?3 ORDER BY arn LIMIT ?4",
            )?;
            let rows = stmt.query_map(
                params![ctx.account, ctx.region, after, PAGE_SIZE as i64 + 1],
                |r| Ok((r.get(0)?, json_map(r.get(1)?))),
            )?;
            rows.collect::<Result<_, _>>().map_err(AwsError::from)
        })?;
        let (applications, token) = page(applications, PAGE_SIZE, |(arn, _)| arn.as_str());
        let applications: Vec<Value> = applications
            .into_iter()
            .map(|(arn, mut attributes)| {
                attributes.retain(|k, _| !SECRET_ATTRIBUTES.contains(&k.as_str()));
                Value::map()
                    .with("PlatformApplicationArn", arn)
                    .with("Attributes", attributes_value(&attributes))
            })
            .collect();
        Ok(Value::map()
            .with("PlatformApplications", applications)
            .with_opt("NextToken", token))
    }

    /// Deletes an application and its endpoints; deleting one that is gone succeeds.
    pub(super) fn delete_platform_application(&self, input: &Value) -> AwsResult<Value> {
        let arn = required(input, "PlatformApplicationArn")?;
        self.env.store.with(|c| {
            c.execute_cached(
                "DELETE FROM sns_platform_endpoints WHERE application_arn = ?1",
                [arn],
            )?;
            c.execute_cached(
                "DELETE FROM sns_platform_applications WHERE arn = ?1",
                [arn],
            )?;
            Ok::<_, AwsError>(())
        })?;
        Ok(Value::map())
    }

    /// Creates an endpoint, or returns the one the token already has when its attributes
    /// are the same, as AWS does.
    pub(super) fn create_platform_endpoint(&self, input: &Value) -> AwsResult<Value> {
        let application_arn = required(input, "PlatformApplicationArn")?;
        let token = required(input, "Token")?;
        self.application(application_arn)?;
        let (platform, name) = application_parts(application_arn)
            .ok_or_else(|| not_found("PlatformApplication does not exist"))?;
        let mut attributes = string_map(input, "Attributes");
        attributes.insert("Token".into(), token.into());
        attributes
            .entry("Enabled".into())
            .or_insert_with(|| "true".into());
        if let Some(data) = input.str("CustomUserData") {
            attributes.insert("CustomUserData".into(), data.into());
        }
        let existing: Option<(String, Attributes)> = self.env.store.with(|c| {
            c.prepare_cached(
                "SELECT arn, attributes FROM sns_platform_endpoints
                 WHERE application_arn = ?1 AND token = ?2",
            )?
            .query_row([application_arn, token], |r| {
                Ok((r.get(0)?, json_map(r.get(1)?)))
            })
            .optional()
            .map_err(AwsError::from)
        })?;
        if let Some((arn, stored)) = existing {
            if stored != attributes {
                return Err(invalid(format!(
                    "Token Reason: Endpoint {arn} already exists with the same Token, but different attributes."
                )));
            }
            return Ok(Value::map().with("EndpointArn", arn));
        }
        let arn = format!(
            "{}:endpoint/{platform}/{name}/{}",
            application_arn
                .rsplit_once(":app/")
                .map_or(application_arn, |(prefix, _)| prefix),
            new_request_id()
        );
        self.env.store.with(|c| {
            c.prepare_cached(
                "INSERT INTO sns_platform_endpoints (arn, application_arn, token, attributes)
                 VALUES (?1, ?2, ?3, ?4)",
            )?
            .execute(params![arn, application_arn, token, to_json(&attributes)])
            .map_err(AwsError::from)
        })?;
        Ok(Value::map().with("EndpointArn", arn))
    }

    pub(super) fn get_endpoint_attributes(&self, input: &Value) -> AwsResult<Value> {
        let attributes = self.endpoint(required(input, "EndpointArn")?)?;
        Ok(Value::map().with("Attributes", attributes_value(&attributes)))
    }

    pub(super) fn set_endpoint_attributes(&self, input: &Value) -> AwsResult<Value> {
        let arn = required(input, "EndpointArn")?;
        let mut attributes = self.endpoint(arn)?;
        attributes.extend(string_map(input, "Attributes"));
        let token = attributes.get("Token").cloned().unwrap_or_default();
        self.env.store.with(|c| {
            set_attributes(c, "sns_platform_endpoints", arn, &attributes)?;
            c.execute_cached(
                "UPDATE sns_platform_endpoints SET token = ?2 WHERE arn = ?1",
                params![arn, token],
            )?;
            Ok::<_, AwsError>(())
        })?;
        Ok(Value::map())
    }

    /// Deletes an endpoint; deleting one that is gone succeeds.
    pub(super) fn delete_endpoint(&self, input: &Value) -> AwsResult<Value> {
        let arn = required(input, "EndpointArn")?;
        self.env.store.with(|c| {
            c.execute_cached("DELETE FROM sns_platform_endpoints WHERE arn = ?1", [arn])
                .map_err(AwsError::from)
        })?;
        Ok(Value::map())
    }

    pub(super) fn list_endpoints_by_platform_application(&self, input: &Value) -> AwsResult<Value> {
        let application_arn = required(input, "PlatformApplicationArn")?;
        self.application(application_arn)?;
        let after = input.str("NextToken").unwrap_or_default();
        let endpoints: Vec<(String, Attributes)> = self.env.store.with(|c| {
            let mut stmt = c.prepare_cached(
                "SELECT arn, attributes FROM sns_platform_endpoints
                 WHERE application_arn = ?1 AND arn > ?2 ORDER BY arn LIMIT ?3",
            )?;
            let rows = stmt
                .query_map(params![application_arn, after, PAGE_SIZE as i64 + 1], |r| {
                    Ok((r.get(0)?, json_map(r.get(1)?)))
                })?;
            rows.collect::<Result<_, _>>().map_err(AwsError::from)
        })?;
        let (endpoints, token) = page(endpoints, PAGE_SIZE, |(arn, _)| arn.as_str());
        let endpoints: Vec<Value> = endpoints
            .into_iter()
            .map(|(arn, attributes)| {
                Value::map()
                    .with("EndpointArn", arn)
                    .with("Attributes", attributes_value(&attributes))
            })
            .collect();
        Ok(Value::map()
            .with("Endpoints", endpoints)
            .with_opt("NextToken", token))
    }

    /// Publish to an endpoint ARN: recorded as a push delivery, refused when the endpoint
    /// or its application is disabled. With `MessageStructure=json` the platform's own
    /// entry is what is pushed.
    pub(super) fn publish_to_endpoint(
        &self,
        ctx: &Context,
        arn: &str,
        input: &Value,
    ) -> AwsResult<Value> {
        let message = match input.str("Message") {
            Some(m) if !m.is_empty() => m,
            _ => return Err(invalid("Empty message")),
        };
        let attributes = self.endpoint(arn)?;
        if attributes.get("Enabled").map(String::as_str) == Some("false") {
            return Err(AwsError::new(
                "EndpointDisabledException",
                "Endpoint is disabled",
            ));
        }
        let platform = arn
            .split_once(":endpoint/")
            .and_then(|(_, rest)| rest.split('/').next())
            .unwrap_or_default();
        let pushed = match input.str("MessageStructure") {
            Some("json") => {
                let structure: serde_json::Value = serde_json::from_str(message).map_err(|_| {
                    invalid("Message Structure - JSON message body failed to parse")
                })?;
                structure
                    .get(platform)
                    .or_else(|| structure.get("default"))
                    .and_then(serde_json::Value::as_str)
                    .ok_or_else(|| {
                        invalid("Message Structure - No default entry in JSON message body")
                    })?
                    .to_string()
            }
            _ => message.to_string(),
        };
        let message_id = new_request_id();
        deliveries::record_direct(
            &self.env,
            ctx,
            "sns:PushNotification",
            arn,
            &serde_json::json!({ "Message": pushed, "MessageId": message_id }),
        );
        Ok(Value::map().with("MessageId", message_id))
    }

    fn sms_attributes(&self, ctx: &Context) -> AwsResult<Attributes> {
        self.env.store.with(|c| {
            c.prepare_cached(
                "SELECT attributes FROM sns_sms_attributes WHERE account = ?1 AND region = ?2",
            )?
            .query_row([&ctx.account, &ctx.region], |r| r.get(0))
            .optional()
            .map(|a| a.map(json_map).unwrap_or_default())
            .map_err(AwsError::from)
        })
    }

    pub(super) fn set_sms_attributes(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let mut attributes = self.sms_attributes(ctx)?;
        let changes = string_map(input, "attributes");
        if let Some(kind) = changes.get("DefaultSMSType") {
            if kind != "Promotional" && kind != "Transactional" {
                return Err(invalid("DefaultSMSType"));
            }
        }
        attributes.extend(changes);
        self.env.store.with(|c| {
            c.prepare_cached(
                "INSERT INTO sns_sms_attributes (account, region, attributes) VALUES (?1, ?2, ?3)
                 ON CONFLICT (account, region) DO UPDATE SET attributes = excluded.attributes",
            )?
            .execute(params![ctx.account, ctx.region, to_json(&attributes)])
            .map_err(AwsError::from)
        })?;
        Ok(Value::map())
    }

    pub(super) fn get_sms_attributes(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let mut attributes = self.sms_attributes(ctx)?;
        let wanted = string_list(input, "attributes");
        if !wanted.is_empty() {
            attributes.retain(|k, _| wanted.contains(&k.as_str()));
        }
        Ok(Value::map().with("attributes", attributes_value(&attributes)))
    }

    /// No number ever replies STOP to Roto, so none is opted out; the number is checked
    /// as AWS checks it.
    pub(super) fn check_if_phone_number_is_opted_out(&self, input: &Value) -> AwsResult<Value> {
        check_phone_number(required(input, "phoneNumber")?)?;
        Ok(Value::map().with("isOptedOut", false))
    }

    pub(super) fn opt_in_phone_number(&self, input: &Value) -> AwsResult<Value> {
        check_phone_number(required(input, "phoneNumber")?)?;
        Ok(Value::map())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn application_arns_split_into_platform_and_name() {
        assert_eq!(
            application_parts("arn:aws:sns:us-east-1:000000000000:app/GCM/shop"),
            Some(("GCM", "shop"))
        );
        assert_eq!(
            application_parts("arn:aws:sns:us-east-1:000000000000:topic"),
            None
        );
    }

    #[test]
    fn phone_numbers_are_e164() {
        assert!(check_phone_number("+15555550100").is_ok());
        assert!(check_phone_number("+1555-555").is_err());
        assert!(check_phone_number("+").is_err());
        assert!(check_phone_number("+1234567890123456").is_err());
    }
}
