//! The credential report: one CSV line per user (and the root) with the state of its
//! password, MFA, access keys and signing certificates, generated at once and kept until the next generation.

use roto_core::timestamp::{format, TimestampFormat};
use roto_core::{AwsError, AwsResult, Value};
use rusqlite::Connection;

use super::store::{self, Family, Kind, Relation};
use super::{now, Iam};

const HEADER: &str = "user,arn,user_creation_time,password_enabled,password_last_used,password_last_changed,password_next_rotation,mfa_active,access_key_1_active,access_key_1_last_rotated,access_key_1_last_used_date,access_key_1_last_used_region,access_key_1_last_used_service,access_key_2_active,access_key_2_last_rotated,access_key_2_last_used_date,access_key_2_last_used_region,access_key_2_last_used_service,cert_1_active,cert_1_last_rotated,cert_2_active,cert_2_last_rotated";

/// A report time as the CSV writes it (`2026-12-02T18:00:00+00:00`).
fn csv_time(millis: i64) -> String {
    let text = format(millis / 1000 * 1000, TimestampFormat::Iso8601);
    match text.split_once('.') {
        Some((seconds, _)) => format!("{seconds}+00:00"),
        None => text,
    }
}

fn report(c: &Connection, account: &str) -> AwsResult<String> {
    let mut lines = vec![HEADER.to_string()];
    lines.push(format!(
        "<root_account>,arn:aws:iam::{account}:root,{},not_supported,N/A,not_supported,not_supported,false,false,N/A,N/A,N/A,N/A,false,N/A,N/A,N/A,N/A,false,N/A,false,N/A",
        csv_time(0)
    ));
    let mut users = store::list(c, account, Kind::User, "/")?;
    users.sort_by_key(|u| u.name.to_lowercase());
    for user in users {
        let password = user.attrs.get("LoginProfile");
        let password_changed = password
            .and_then(|p| p.get("Changed").or_else(|| p.get("Created")))
            .and_then(serde_json::Value::as_i64)
            .map_or("N/A".to_string(), csv_time);
        let mfa = !store::children(c, account, Relation::UserMfa, &user.name)?.is_empty();
        let mut keys = store::access_keys(c, account, &user.name)?;
        keys.sort_by_key(|(_, _, created)| *created);
        let mut key_columns = Vec::new();
        for slot in 0..2 {
            match keys.get(slot) {
                Some((_, status, created)) => key_columns.push(format!(
                    "{},{},N/A,N/A,N/A",
                    status == "Active",
                    csv_time(*created)
                )),
                None => key_columns.push("false,N/A,N/A,N/A,N/A".to_string()),
            }
        }
        let certs = store::credentials(c, account, Family::SigningCertificate, Some(&user.name))?;
        let cert_columns: Vec<String> = (0..2)
            .map(|slot| match certs.get(slot) {
                Some(cert) => format!("{},{}", cert.status == "Active", csv_time(cert.created)),
                None => "false,N/A".to_string(),
            })
            .collect();
        lines.push(format!(
            "{},{},{},{},N/A,{password_changed},N/A,{mfa},{},{}",
            user.name,
            user.arn(account),
            csv_time(user.created),
            password.is_some(),
            key_columns.join(","),
            cert_columns.join(",")
        ));
    }
    Ok(lines.join("\n"))
}

impl Iam {
    /// `GenerateCredentialReport`: `STARTED` when there was no report, else `COMPLETE`
    /// (the report is ready at once either way).
    pub(super) fn generate_credential_report(&self, account: &str) -> AwsResult<Value> {
        let existed = self.env.store.transaction(|c| {
            let existed = store::setting(c, account, "credential-report")?.is_some();
            store::put_setting(c, account, "credential-report", &report(c, account)?)?;
            store::put_setting(c, account, "credential-report-time", &now().to_string())?;
            Ok::<_, AwsError>(existed)
        })?;
        Ok(match existed {
            true => Value::map().with("State", "COMPLETE"),
            false => Value::map().with("State", "STARTED").with(
                "Description",
                "No report exists. Starting a new report generation task",
            ),
        })
    }

    /// `GetCredentialReport`.
    pub(super) fn get_credential_report(&self, account: &str) -> AwsResult<Value> {
        let (content, time) = self.env.store.with(|c| {
            Ok::<_, AwsError>((
                store::setting(c, account, "credential-report")?,
                store::setting(c, account, "credential-report-time")?,
            ))
        })?;
        let content = content.ok_or_else(|| {
            AwsError::new(
                "CredentialReportNotPresentException",
                "Credential report not present. Generate a credential report with GenerateCredentialReport.",
            )
        })?;
        let generated = time.and_then(|t| t.parse().ok()).unwrap_or_default();
        Ok(Value::map()
            .with("Content", Value::Blob(content.into_bytes()))
            .with("ReportFormat", "text/csv")
            .with("GeneratedTime", Value::Timestamp(generated)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn report_times_use_utc_offsets_without_fractions() {
        assert_eq!(csv_time(1_500), "1970-01-01T00:00:01+00:00");
    }
}
