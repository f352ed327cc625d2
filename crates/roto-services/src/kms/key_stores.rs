//! Custom key stores: CloudHSM key stores and external key stores, stored with their
//! settings and a connection state (`DISCONNECTED` until ConnectCustomKeyStore, then
//! `CONNECTED`; Roto has no cluster or proxy to reach, so connecting always succeeds at once).
//! Keys created in a connected store get local material like any other key; while their
//! store is disconnected they are `Unavailable`.

use roto_core::protocol::json::value_to_json;
use roto_core::store::Cached;
use roto_core::timestamp::now_millis;
use roto_core::{AwsError, AwsResult, Context, Value};

use super::keys::list_page;
use super::{crypto, Kms};

/// A custom key store as stored: its `CustomKeyStoresListEntry` without the connection state.
struct KeyStore {
    id: String,
    state: String,
    entry: Value,
}

impl KeyStore {
    fn kind(&self) -> &str {
        self.entry
            .str("CustomKeyStoreType")
            .unwrap_or("AWS_CLOUDHSM")
    }

    fn xks(&self, member: &str) -> Option<&str> {
        self.entry.get("XksProxyConfiguration")?.str(member)
    }

    fn listed(&self) -> Value {
        self.entry
            .clone()
            .with("CustomKeyStoreId", self.id.as_str())
            .with("ConnectionState", self.state.as_str())
    }
}

fn store_not_found(id: &str) -> AwsError {
    AwsError::new(
        "CustomKeyStoreNotFoundException",
        format!("Custom key store {id} does not exist."),
    )
}

fn store_state_error(store: &KeyStore, operation: &str) -> AwsError {
    AwsError::new(
        "CustomKeyStoreInvalidStateException",
        format!(
            "{operation} is not valid for custom key store {} in connection state {}.",
            store.id, store.state
        ),
    )
}

fn required(member: &str, kind: &str) -> AwsError {
    AwsError::validation(format!(
        "{member} is required for a custom key store of type {kind}."
    ))
}

/// The members of the request that configure an external key store's proxy, and the
/// `XksProxyConfiguration` members they become.
const XKS_MEMBERS: &[(&str, &str)] = &[
    ("XksProxyConnectivity", "Connectivity"),
    ("XksProxyUriEndpoint", "UriEndpoint"),
    ("XksProxyUriPath", "UriPath"),
    ("XksProxyVpcEndpointServiceName", "VpcEndpointServiceName"),
    ("XksProxyVpcEndpointServiceOwner", "VpcEndpointServiceOwner"),
];

/// The request members valid only for one type of store.
const CLOUD_HSM_MEMBERS: &[&str] = &[
    "CloudHsmClusterId",
    "TrustAnchorCertificate",
    "KeyStorePassword",
];

/// Writes the settings a Create or Update request gives into a store's entry.
fn apply_settings(entry: &mut Value, input: &Value) {
    for (member, listed) in [
        ("CloudHsmClusterId", "CloudHsmClusterId"),
        ("TrustAnchorCertificate", "TrustAnchorCertificate"),
    ] {
        if let Some(v) = input.str(member) {
            entry.insert(listed, v);
        }
    }
    let mut xks = entry
        .get("XksProxyConfiguration")
        .cloned()
        .unwrap_or_else(Value::map);
    let mut touched = false;
    for (member, listed) in XKS_MEMBERS {
        if let Some(v) = input.str(member) {
            touched = true;
            match v {
                "" => {
                    xks.remove(listed);
                }
                v => xks.insert(*listed, v),
            }
        }
    }
    if let Some(id) = input
        .get("XksProxyAuthenticationCredential")
        .and_then(|c| c.str("AccessKeyId"))
    {
        touched = true;
        xks.insert("AccessKeyId", id);
    }
    if touched {
        entry.insert("XksProxyConfiguration", xks);
    }
}

impl Kms {
    fn key_stores(&self, ctx: &Context) -> AwsResult<Vec<KeyStore>> {
        let rows: Vec<(String, String, String)> = self.env.store.with(|c| {
            let mut st = c.prepare_cached(
                "SELECT store_id, state, entry FROM kms_key_stores
                 WHERE account = ?1 AND region = ?2 ORDER BY created, store_id",
            )?;
            let rows = st.query_map([&ctx.account, &ctx.region], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?))
            })?;
            rows.collect::<rusqlite::Result<_>>()
                .map_err(AwsError::from)
        })?;
        Ok(rows
            .into_iter()
            .map(|(id, state, json)| KeyStore {
                id,
                state,
                entry: serde_json::from_str(&json)
                    .map(|j| Value::from_json(&j))
                    .unwrap_or_else(|_| Value::map()),
            })
            .collect())
    }

    fn key_store(&self, ctx: &Context, id: &str) -> AwsResult<KeyStore> {
        self.key_stores(ctx)?
            .into_iter()
            .find(|s| s.id == id)
            .ok_or_else(|| store_not_found(id))
    }

    /// The connection state and CloudHSM cluster of the store a key lives in.
    pub(super) fn key_store_of_key(
        &self,
        ctx: &Context,
        id: &str,
    ) -> AwsResult<Option<(String, Option<String>)>> {
        Ok(self
            .key_stores(ctx)?
            .into_iter()
            .find(|s| s.id == id)
            .map(|s| {
                let cluster = s.entry.str("CloudHsmClusterId").map(str::to_string);
                (s.state, cluster)
            }))
    }

    /// A connected store that a new key may be created in, of the type `origin` names.
    pub(super) fn connected_key_store(
        &self,
        ctx: &Context,
        id: &str,
        origin: &str,
    ) -> AwsResult<Option<String>> {
        let store = self.key_store(ctx, id)?;
        if store.kind() != origin {
            return Err(AwsError::new(
                "UnsupportedOperationException",
                format!(
                    "Origin {origin} is not valid for custom key store {id} of type {}.",
                    store.kind()
                ),
            ));
        }
        if store.state != "CONNECTED" {
            return Err(store_state_error(&store, "CreateKey"));
        }
        Ok(store.entry.str("CloudHsmClusterId").map(str::to_string))
    }

    /// Fails unless GenerateRandom may draw from the store: a connected CloudHSM key store.
    pub(super) fn check_random_source(&self, ctx: &Context, id: &str) -> AwsResult<()> {
        let store = self.key_store(ctx, id)?;
        if store.kind() != "AWS_CLOUDHSM" {
            return Err(AwsError::new(
                "UnsupportedOperationException",
                format!("GenerateRandom is not supported for external key store {id}."),
            ));
        }
        if store.state != "CONNECTED" {
            return Err(store_state_error(&store, "GenerateRandom"));
        }
        Ok(())
    }

    /// Fails when another store already uses what this one would: the name, the CloudHSM
    /// cluster, the proxy address, or the VPC endpoint service.
    fn check_unique(&self, ctx: &Context, candidate: &KeyStore) -> AwsResult<()> {
        let name = candidate
            .entry
            .str("CustomKeyStoreName")
            .unwrap_or_default();
        for other in self.key_stores(ctx)? {
            if other.id == candidate.id {
                continue;
            }
            if other.entry.str("CustomKeyStoreName") == Some(name) {
                return Err(AwsError::new(
                    "CustomKeyStoreNameInUseException",
                    format!("Custom key store name {name} is already in use."),
                ));
            }
            let cluster = candidate.entry.str("CloudHsmClusterId");
            if cluster.is_some() && other.entry.str("CloudHsmClusterId") == cluster {
                return Err(AwsError::new(
                    "CloudHsmClusterInUseException",
                    format!(
                        "CloudHSM cluster {} is already associated with custom key store {}.",
                        cluster.unwrap_or_default(),
                        other.id
                    ),
                ));
            }
            let endpoint = candidate.xks("UriEndpoint");
            if endpoint.is_none() || other.xks("UriEndpoint") != endpoint {
                continue;
            }
            if other.xks("UriPath") == candidate.xks("UriPath") {
                return Err(AwsError::new(
                    "XksProxyUriInUseException",
                    format!(
                        "The external key store proxy URI is already used by custom key store {}.",
                        other.id
                    ),
                ));
            }
            if other.xks("Connectivity") == Some("VPC_ENDPOINT_SERVICE")
                || candidate.xks("Connectivity") == Some("VPC_ENDPOINT_SERVICE")
            {
                return Err(AwsError::new(
                    "XksProxyUriEndpointInUseException",
                    format!(
                        "The external key store proxy endpoint is already used by custom key store {}.",
                        other.id
                    ),
                ));
            }
            let service = candidate.xks("VpcEndpointServiceName");
            if service.is_some() && other.xks("VpcEndpointServiceName") == service {
                return Err(AwsError::new(
                    "XksProxyVpcEndpointServiceInUseException",
                    format!(
                        "The VPC endpoint service is already used by custom key store {}.",
                        other.id
                    ),
                ));
            }
        }
        Ok(())
    }

    /// Fails unless the store's settings are complete for its type (the CloudHSM password,
    /// which is not kept, is complete when `password_given`).
    fn check_complete(store: &KeyStore, password_given: bool) -> AwsResult<()> {
        let kind = store.kind();
        if kind == "AWS_CLOUDHSM" {
            for member in ["CloudHsmClusterId", "TrustAnchorCertificate"] {
                if store.entry.str(member).is_none() {
                    return Err(required(member, kind));
                }
            }
            if !password_given {
                return Err(required("KeyStorePassword", kind));
            }
            return Ok(());
        }
        for (member, listed) in [
            ("XksProxyConnectivity", "Connectivity"),
            ("XksProxyUriEndpoint", "UriEndpoint"),
            ("XksProxyUriPath", "UriPath"),
        ] {
            if store.xks(listed).is_none() {
                return Err(required(member, kind));
            }
        }
        if store.xks("AccessKeyId").is_none() {
            return Err(required("XksProxyAuthenticationCredential", kind));
        }
        if store.xks("Connectivity") == Some("VPC_ENDPOINT_SERVICE")
            && store.xks("VpcEndpointServiceName").is_none()
        {
            return Err(required("XksProxyVpcEndpointServiceName", kind));
        }
        Ok(())
    }

    /// Fails when the request names settings of the other type of store.
    fn check_members_fit(kind: &str, input: &Value) -> AwsResult<()> {
        let foreign: Vec<&str> = if kind == "AWS_CLOUDHSM" {
            XKS_MEMBERS
                .iter()
                .map(|(m, _)| *m)
                .chain(["XksProxyAuthenticationCredential"])
                .collect()
        } else {
            CLOUD_HSM_MEMBERS.to_vec()
        };
        match foreign.into_iter().find(|m| input.get(m).is_some()) {
            Some(member) => Err(AwsError::validation(format!(
                "{member} is not valid for a custom key store of type {kind}."
            ))),
            None => Ok(()),
        }
    }

    fn save_key_store(&self, ctx: &Context, store: &KeyStore) -> AwsResult<()> {
        let created = match store.entry.get("CreationDate") {
            Some(Value::Timestamp(at)) => *at,
            _ => now_millis(),
        };
        self.env.store.with(|c| {
            c.execute_cached(
                "INSERT INTO kms_key_stores (account, region, store_id, state, created, entry)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)
                 ON CONFLICT (account, region, store_id) DO UPDATE SET state = ?4, entry = ?6",
                rusqlite::params![
                    ctx.account,
                    ctx.region,
                    store.id,
                    store.state,
                    created,
                    value_to_json(&store.entry).to_string()
                ],
            )
        })?;
        Ok(())
    }

    pub(super) fn create_custom_key_store(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let kind = input.str("CustomKeyStoreType").unwrap_or("AWS_CLOUDHSM");
        Self::check_members_fit(kind, input)?;
        let mut entry = Value::map()
            .with(
                "CustomKeyStoreName",
                input.str("CustomKeyStoreName").unwrap_or_default(),
            )
            .with("CustomKeyStoreType", kind)
            .with("CreationDate", Value::Timestamp(now_millis()));
        apply_settings(&mut entry, input);
        let store = KeyStore {
            id: format!("cks-{}", &hex::encode(crypto::random_bytes(9))[..17]),
            state: "DISCONNECTED".into(),
            entry,
        };
        Self::check_complete(&store, input.str("KeyStorePassword").is_some())?;
        self.check_unique(ctx, &store)?;
        self.save_key_store(ctx, &store)?;
        Ok(Value::map().with("CustomKeyStoreId", store.id))
    }

    pub(super) fn describe_custom_key_stores(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        let (id, name) = (
            input.str("CustomKeyStoreId"),
            input.str("CustomKeyStoreName"),
        );
        if id.is_some() && name.is_some() {
            return Err(AwsError::validation(
                "Specify either CustomKeyStoreId or CustomKeyStoreName, not both.",
            ));
        }
        let stores: Vec<Value> = self
            .key_stores(ctx)?
            .into_iter()
            .filter(|s| {
                id.is_none_or(|id| s.id == id)
                    && name.is_none_or(|n| s.entry.str("CustomKeyStoreName") == Some(n))
            })
            .map(|s| s.listed())
            .collect();
        if stores.is_empty() {
            if let Some(wanted) = id.or(name) {
                return Err(store_not_found(wanted));
            }
        }
        list_page(stores, "CustomKeyStores", input)
    }

    pub(super) fn update_custom_key_store(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let mut store = self.key_store(ctx, input.str("CustomKeyStoreId").unwrap_or_default())?;
        let kind = store.kind().to_string();
        Self::check_members_fit(&kind, input)?;
        // A connected store takes only these changes.
        let while_connected: &[&str] = if kind == "AWS_CLOUDHSM" {
            &["NewCustomKeyStoreName"]
        } else {
            &[
                "NewCustomKeyStoreName",
                "XksProxyAuthenticationCredential",
                "XksProxyUriPath",
            ]
        };
        let needs_disconnect = input.as_map().into_iter().flatten().any(|(member, _)| {
            member != "CustomKeyStoreId" && !while_connected.contains(&member.as_str())
        });
        if needs_disconnect && store.state != "DISCONNECTED" {
            return Err(store_state_error(&store, "UpdateCustomKeyStore"));
        }
        if let Some(name) = input.str("NewCustomKeyStoreName") {
            store.entry.insert("CustomKeyStoreName", name);
        }
        apply_settings(&mut store.entry, input);
        Self::check_complete(&store, true)?;
        self.check_unique(ctx, &store)?;
        self.save_key_store(ctx, &store)?;
        Ok(Value::map())
    }

    pub(super) fn delete_custom_key_store(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let store = self.key_store(ctx, input.str("CustomKeyStoreId").unwrap_or_default())?;
        if store.state != "DISCONNECTED" {
            return Err(store_state_error(&store, "DeleteCustomKeyStore"));
        }
        let keys: i64 = self.env.store.with(|c| {
            c.query_row_cached(
                "SELECT count(*) FROM kms_keys WHERE account = ?1 AND region = ?2
                 AND custom_key_store_id = ?3 AND (deletion_date IS NULL OR deletion_date > ?4)",
                rusqlite::params![ctx.account, ctx.region, store.id, now_millis()],
                |r| r.get(0),
            )
        })?;
        if keys > 0 {
            return Err(AwsError::new(
                "CustomKeyStoreHasCMKsException",
                format!(
                    "Custom key store {} contains KMS keys; delete them first.",
                    store.id
                ),
            ));
        }
        self.env.store.with(|c| {
            c.execute_cached(
                "DELETE FROM kms_key_stores WHERE account = ?1 AND region = ?2 AND store_id = ?3",
                [&ctx.account, &ctx.region, &store.id],
            )
        })?;
        Ok(Value::map())
    }

    pub(super) fn set_key_store_connected(
        &self,
        ctx: &Context,
        input: &Value,
        connected: bool,
    ) -> AwsResult<Value> {
        let mut store = self.key_store(ctx, input.str("CustomKeyStoreId").unwrap_or_default())?;
        if !connected && store.state == "DISCONNECTED" {
            return Err(store_state_error(&store, "DisconnectCustomKeyStore"));
        }
        store.state = if connected {
            "CONNECTED"
        } else {
            "DISCONNECTED"
        }
        .into();
        self.save_key_store(ctx, &store)?;
        Ok(Value::map())
    }
}
