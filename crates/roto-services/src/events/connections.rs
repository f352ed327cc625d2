//! Connections and API destinations: the credentials and HTTP endpoints EventBridge
//! targets can call, stored with AWS's shapes and states.
//!
//! AWS keeps a connection's credentials in a Secrets Manager secret it manages
//! (`events!connection/<name>/<id>`); Roto names that secret in `SecretArn` but keeps the
//! credentials with the connection, and, as AWS does, never returns them: `DescribeConnection`
//! shows the parameters with every secret value removed. A connection is authorized as it is
//! created (there is no OAuth endpoint to call), and `DeauthorizeConnection` makes it
//! `DEAUTHORIZED`.

use roto_core::store::Cached;
use roto_core::{AwsError, AwsResult, Context, Value};
use rusqlite::OptionalExtension;

use super::buses::bad_token;
use super::{new_id, not_found, Events};
use crate::paging;

/// Members of `AuthParameters` that are secret, by the parameter block holding them.
const SECRET_MEMBERS: &[(&str, &str)] = &[
    ("BasicAuthParameters", "Password"),
    ("ApiKeyAuthParameters", "ApiKeyValue"),
    ("ClientParameters", "ClientSecret"),
];

/// The members of a connection a request sets and DescribeConnection returns as set.
const CONNECTION_MEMBERS: &[&str] = &[
    "Description",
    "AuthorizationType",
    "InvocationConnectivityParameters",
    "KmsKeyIdentifier",
];

/// The members of an API destination a request sets and DescribeApiDestination returns.
const API_DESTINATION_MEMBERS: &[&str] = &[
    "Description",
    "ConnectionArn",
    "InvocationEndpoint",
    "HttpMethod",
    "InvocationRateLimitPerSecond",
];

/// The two kinds of resource this module stores, which share one table layout.
#[derive(Clone, Copy)]
enum Kind {
    Connection,
    ApiDestination,
}

impl Kind {
    fn table(self) -> &'static str {
        match self {
            Kind::Connection => "events_connections",
            Kind::ApiDestination => "events_api_destinations",
        }
    }

    /// The ARN's resource type (`connection/<name>/<id>`).
    fn resource(self) -> &'static str {
        match self {
            Kind::Connection => "connection",
            Kind::ApiDestination => "api-destination",
        }
    }

    fn arn_member(self) -> &'static str {
        match self {
            Kind::Connection => "ConnectionArn",
            Kind::ApiDestination => "ApiDestinationArn",
        }
    }

    fn not_found(self, name: &str) -> AwsError {
        not_found(match self {
            Kind::Connection => format!("Connection '{name}' does not exist."),
            Kind::ApiDestination => format!("An api-destination '{name}' does not exist."),
        })
    }

    fn already_exists(self, name: &str) -> AwsError {
        let what = match self {
            Kind::Connection => "Connection",
            Kind::ApiDestination => "An api-destination",
        };
        AwsError::new(
            "ResourceAlreadyExistsException",
            format!("{what} '{name}' already exists."),
        )
        .with_status(400)
    }
}

/// One stored connection or API destination: its document holds every member as it was
/// set (credentials included), plus its ARN and state.
struct Stored {
    name: String,
    document: Value,
    created: i64,
    modified: i64,
}

fn from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Stored> {
    let text: String = r.get(1)?;
    Ok(Stored {
        name: r.get(0)?,
        document: Value::from_json(&serde_json::from_str(&text).unwrap_or_default()),
        created: r.get(2)?,
        modified: r.get(3)?,
    })
}

/// Removes the secret values from a copy of `AuthParameters`, at any depth: the
/// credentials, and the `Value` of every parameter marked `IsValueSecret`.
fn without_secrets(value: &Value) -> Value {
    match value {
        Value::Map(members) => {
            let secret_value = value.bool("IsValueSecret") == Some(true);
            Value::Map(
                members
                    .iter()
                    .filter(|(k, _)| !SECRET_MEMBERS.iter().any(|(_, secret)| secret == k))
                    .filter(|(k, _)| !(secret_value && k.as_str() == "Value"))
                    .map(|(k, v)| (k.clone(), without_secrets(v)))
                    .collect(),
            )
        }
        Value::List(items) => Value::List(items.iter().map(without_secrets).collect()),
        other => other.clone(),
    }
}

/// Copies the members `names` of `from` that are present into `to`.
fn copy_members(from: &Value, to: &mut Value, names: &[&str]) {
    for name in names {
        if let Some(v) = from.get(name) {
            to.insert(*name, v.clone());
        }
    }
}

/// The authorization block `AuthorizationType` requires, else AWS's validation error.
fn check_auth(authorization: &str, auth: Option<&Value>) -> AwsResult<()> {
    let block = match authorization {
        "BASIC" => "BasicAuthParameters",
        "API_KEY" => "ApiKeyAuthParameters",
        "OAUTH_CLIENT_CREDENTIALS" => "OAuthParameters",
        _ => return Ok(()),
    };
    if auth.and_then(|a| a.get(block)).is_none() {
        return Err(AwsError::validation(format!(
            "{block} must be specified for authorization type {authorization}."
        )));
    }
    Ok(())
}

/// The ARN of the secret AWS would keep the connection `arn`'s credentials in.
fn secret_arn(arn: &str) -> String {
    let (prefix, rest) = arn.rsplit_once(":connection/").unwrap_or((arn, ""));
    format!(
        "{}:secret:events!connection/{rest}-{}",
        prefix.replacen(":events:", ":secretsmanager:", 1),
        &new_id()[..6]
    )
}

impl Events {
    fn find(&self, ctx: &Context, kind: Kind, name: &str) -> AwsResult<Stored> {
        self.env
            .store
            .with(|c| {
                c.prepare_cached(&format!(
                    "SELECT name, document, created, modified FROM {}
                     WHERE account = ?1 AND region = ?2 AND name = ?3",
                    kind.table()
                ))?
                .query_row([&ctx.account, &ctx.region, name], from_row)
                .optional()
                .map_err(AwsError::from)
            })?
            .ok_or_else(|| kind.not_found(name))
    }

    fn save(&self, ctx: &Context, kind: Kind, stored: &Stored) -> AwsResult<()> {
        let text = stored.document.to_json().to_string();
        self.env.store.with(|c| {
            c.prepare_cached(&format!(
                "INSERT INTO {} (account, region, name, document, created, modified)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)
                 ON CONFLICT (account, region, name)
                 DO UPDATE SET document = excluded.document, modified = excluded.modified",
                kind.table()
            ))?
            .execute(rusqlite::params![
                ctx.account,
                ctx.region,
                stored.name,
                text,
                stored.created,
                stored.modified
            ])
            .map(drop)
            .map_err(AwsError::from)
        })
    }

    fn list(&self, ctx: &Context, kind: Kind) -> AwsResult<Vec<Stored>> {
        self.env.store.with(|c| {
            let mut stmt = c.prepare_cached(&format!(
                "SELECT name, document, created, modified FROM {}
                 WHERE account = ?1 AND region = ?2 ORDER BY name",
                kind.table()
            ))?;
            let rows = stmt.query_map([&ctx.account, &ctx.region], from_row)?;
            rows.collect::<Result<Vec<_>, _>>().map_err(AwsError::from)
        })
    }

    fn remove(&self, ctx: &Context, kind: Kind, name: &str) -> AwsResult<()> {
        self.env.store.with(|c| {
            c.execute_cached(
                &format!(
                    "DELETE FROM {} WHERE account = ?1 AND region = ?2 AND name = ?3",
                    kind.table()
                ),
                [&ctx.account, &ctx.region, name],
            )
            .map(drop)
            .map_err(AwsError::from)
        })
    }

    /// Creates a connection or API destination from the request's members.
    fn create(
        &self,
        ctx: &Context,
        kind: Kind,
        input: &Value,
        state: (&str, &str),
    ) -> AwsResult<Stored> {
        let name = input.str("Name").unwrap_or_default();
        if self.find(ctx, kind, name).is_ok() {
            return Err(kind.already_exists(name));
        }
        let arn = format!(
            "arn:aws:events:{}:{}:{}/{name}/{}",
            ctx.region,
            ctx.account,
            kind.resource(),
            new_id()
        );
        let mut document = Value::map();
        let members = match kind {
            Kind::Connection => {
                document.insert("SecretArn", secret_arn(&arn));
                copy_members(input, &mut document, &["AuthParameters"]);
                CONNECTION_MEMBERS
            }
            Kind::ApiDestination => API_DESTINATION_MEMBERS,
        };
        copy_members(input, &mut document, members);
        document.insert(kind.arn_member(), arn);
        document.insert(state.0, state.1);
        let now = self.now();
        let stored = Stored {
            name: name.to_string(),
            document,
            created: now,
            modified: now,
        };
        self.save(ctx, kind, &stored)?;
        Ok(stored)
    }

    /// The summary every connection answer starts from: ARN, state and times.
    fn connection_summary(stored: &Stored) -> Value {
        let mut out = Value::map();
        copy_members(
            &stored.document,
            &mut out,
            &["ConnectionArn", "ConnectionState"],
        );
        out.with("CreationTime", Value::Timestamp(stored.created))
            .with("LastModifiedTime", Value::Timestamp(stored.modified))
            .with("LastAuthorizedTime", Value::Timestamp(stored.modified))
    }

    pub(super) fn create_connection(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let authorization = input.str("AuthorizationType").unwrap_or_default();
        check_auth(authorization, input.get("AuthParameters"))?;
        let stored = self.create(
            ctx,
            Kind::Connection,
            input,
            ("ConnectionState", "AUTHORIZED"),
        )?;
        Ok(Self::connection_summary(&stored))
    }

    pub(super) fn describe_connection(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let stored = self.find(ctx, Kind::Connection, input.str("Name").unwrap_or_default())?;
        let mut out = Self::connection_summary(&stored).with("Name", stored.name.as_str());
        copy_members(&stored.document, &mut out, &["SecretArn"]);
        copy_members(&stored.document, &mut out, CONNECTION_MEMBERS);
        if let Some(auth) = stored.document.get("AuthParameters") {
            out.insert("AuthParameters", without_secrets(auth));
        }
        Ok(out)
    }

    pub(super) fn update_connection(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let mut stored = self.find(ctx, Kind::Connection, input.str("Name").unwrap_or_default())?;
        let authorization = input
            .str("AuthorizationType")
            .or_else(|| stored.document.str("AuthorizationType"))
            .unwrap_or_default()
            .to_string();
        copy_members(input, &mut stored.document, CONNECTION_MEMBERS);
        if let Some(Value::Map(changes)) = input.get("AuthParameters") {
            let mut auth = stored
                .document
                .get("AuthParameters")
                .and_then(Value::as_map)
                .cloned()
                .unwrap_or_default();
            auth.extend(changes.clone());
            stored.document.insert("AuthParameters", Value::Map(auth));
        }
        check_auth(&authorization, stored.document.get("AuthParameters"))?;
        stored.document.insert("ConnectionState", "AUTHORIZED");
        stored.modified = self.now();
        self.save(ctx, Kind::Connection, &stored)?;
        Ok(Self::connection_summary(&stored))
    }

    pub(super) fn deauthorize_connection(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let mut stored = self.find(ctx, Kind::Connection, input.str("Name").unwrap_or_default())?;
        stored.document.insert("ConnectionState", "DEAUTHORIZED");
        stored.modified = self.now();
        self.save(ctx, Kind::Connection, &stored)?;
        let mut out = Self::connection_summary(&stored);
        out.insert("ConnectionState", "DEAUTHORIZING");
        Ok(out)
    }

    pub(super) fn delete_connection(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let stored = self.find(ctx, Kind::Connection, input.str("Name").unwrap_or_default())?;
        self.remove(ctx, Kind::Connection, &stored.name)?;
        let mut out = Self::connection_summary(&stored);
        out.insert("ConnectionState", "DELETING");
        Ok(out)
    }

    pub(super) fn list_connections(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let prefix = input.str("NamePrefix").unwrap_or_default();
        let state = input.str("ConnectionState");
        let items: Vec<Value> = self
            .list(ctx, Kind::Connection)?
            .iter()
            .filter(|s| s.name.starts_with(prefix))
            .filter(|s| state.is_none() || s.document.str("ConnectionState") == state)
            .map(|s| {
                let mut v = Self::connection_summary(s).with("Name", s.name.as_str());
                if let Some(a) = s.document.get("AuthorizationType") {
                    v.insert("AuthorizationType", a.clone());
                }
                v
            })
            .collect();
        let (page, next) = paging::page(
            items,
            input.int("Limit").unwrap_or(100) as usize,
            input.str("NextToken"),
            bad_token,
        )?;
        Ok(Value::map()
            .with("Connections", page)
            .with_opt("NextToken", next))
    }

    /// The connection or API destination `arn` names (`<resource>/<name>/<id>`), which
    /// must exist in this account under that very ARN.
    fn find_by_arn(&self, ctx: &Context, kind: Kind, arn: &str) -> AwsResult<Stored> {
        let name = arn
            .split_once(&format!(":{}/", kind.resource()))
            .and_then(|(_, rest)| rest.split('/').next())
            .unwrap_or(arn);
        let stored = self.find(ctx, kind, name)?;
        if stored.document.str(kind.arn_member()) != Some(arn) {
            return Err(kind.not_found(name));
        }
        Ok(stored)
    }

    /// The connection an API destination names by ARN must exist in this account.
    fn check_connection_arn(&self, ctx: &Context, arn: &str) -> AwsResult<()> {
        self.find_by_arn(ctx, Kind::Connection, arn).map(drop)
    }

    /// The API destination `arn` names and its connection (credentials included), as a
    /// delivery to it needs them: `(destination, connection, connection's last change)`.
    pub(super) fn api_destination_target(
        &self,
        ctx: &Context,
        arn: &str,
    ) -> AwsResult<(Value, Value, i64)> {
        let destination = self.find_by_arn(ctx, Kind::ApiDestination, arn)?;
        let connection_arn = destination
            .document
            .str("ConnectionArn")
            .unwrap_or_default();
        let connection = self.find_by_arn(ctx, Kind::Connection, connection_arn)?;
        Ok((
            destination.document,
            connection.document,
            connection.modified,
        ))
    }

    /// An API destination as DescribeApiDestination answers it.
    fn api_destination_value(stored: &Stored) -> Value {
        let mut out = Value::map().with("Name", stored.name.as_str());
        copy_members(
            &stored.document,
            &mut out,
            &["ApiDestinationArn", "ApiDestinationState"],
        );
        copy_members(&stored.document, &mut out, API_DESTINATION_MEMBERS);
        out.with(
            "InvocationRateLimitPerSecond",
            stored
                .document
                .int("InvocationRateLimitPerSecond")
                .unwrap_or(300),
        )
        .with("CreationTime", Value::Timestamp(stored.created))
        .with("LastModifiedTime", Value::Timestamp(stored.modified))
    }

    /// The answer of Create/UpdateApiDestination: ARN, state and times.
    fn api_destination_summary(stored: &Stored) -> Value {
        let mut out = Value::map()
            .with("CreationTime", Value::Timestamp(stored.created))
            .with("LastModifiedTime", Value::Timestamp(stored.modified));
        copy_members(
            &stored.document,
            &mut out,
            &["ApiDestinationArn", "ApiDestinationState"],
        );
        out
    }

    pub(super) fn create_api_destination(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        self.check_connection_arn(ctx, input.str("ConnectionArn").unwrap_or_default())?;
        let stored = self.create(
            ctx,
            Kind::ApiDestination,
            input,
            ("ApiDestinationState", "ACTIVE"),
        )?;
        Ok(Self::api_destination_summary(&stored))
    }

    pub(super) fn describe_api_destination(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        let stored = self.find(
            ctx,
            Kind::ApiDestination,
            input.str("Name").unwrap_or_default(),
        )?;
        Ok(Self::api_destination_value(&stored))
    }

    pub(super) fn update_api_destination(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let mut stored = self.find(
            ctx,
            Kind::ApiDestination,
            input.str("Name").unwrap_or_default(),
        )?;
        if let Some(arn) = input.str("ConnectionArn") {
            self.check_connection_arn(ctx, arn)?;
        }
        copy_members(input, &mut stored.document, API_DESTINATION_MEMBERS);
        stored.modified = self.now();
        self.save(ctx, Kind::ApiDestination, &stored)?;
        Ok(Self::api_destination_summary(&stored))
    }

    pub(super) fn delete_api_destination(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let stored = self.find(
            ctx,
            Kind::ApiDestination,
            input.str("Name").unwrap_or_default(),
        )?;
        self.remove(ctx, Kind::ApiDestination, &stored.name)?;
        Ok(Value::map())
    }

    pub(super) fn list_api_destinations(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let prefix = input.str("NamePrefix").unwrap_or_default();
        let connection = input.str("ConnectionArn");
        let items: Vec<Value> = self
            .list(ctx, Kind::ApiDestination)?
            .iter()
            .filter(|s| s.name.starts_with(prefix))
            .filter(|s| connection.is_none() || s.document.str("ConnectionArn") == connection)
            .map(|s| {
                let mut v = Self::api_destination_value(s);
                v.remove("Description");
                v
            })
            .collect();
        let (page, next) = paging::page(
            items,
            input.int("Limit").unwrap_or(100) as usize,
            input.str("NextToken"),
            bad_token,
        )?;
        Ok(Value::map()
            .with("ApiDestinations", page)
            .with_opt("NextToken", next))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secret_values_are_removed_at_any_depth() {
        let auth = Value::from_json(&serde_json::json!({
            "BasicAuthParameters": {"Username": "u", "Password": "p"},
            "OAuthParameters": {
                "ClientParameters": {"ClientID": "id", "ClientSecret": "s"},
                "OAuthHttpParameters": {"BodyParameters": [
                    {"Key": "grant", "Value": "x", "IsValueSecret": true},
                    {"Key": "scope", "Value": "read", "IsValueSecret": false}
                ]}
            }
        }));
        assert_eq!(
            without_secrets(&auth).to_json(),
            serde_json::json!({
                "BasicAuthParameters": {"Username": "u"},
                "OAuthParameters": {
                    "ClientParameters": {"ClientID": "id"},
                    "OAuthHttpParameters": {"BodyParameters": [
                        {"Key": "grant", "IsValueSecret": true},
                        {"Key": "scope", "Value": "read", "IsValueSecret": false}
                    ]}
                }
            })
        );
    }
}
