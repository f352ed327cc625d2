//! Virtual MFA devices and their assignment to users.
//!
//! A device's serial number is its ARN (`arn:aws:iam::<account>:mfa/<path><name>`). The
//! seed is random base32 text, returned only at creation; the `QRCodePNG` Roto returns is a
//! valid one-pixel PNG, not a QR code. Authentication codes are accepted unchecked (a resync
//! only needs its two codes to differ).

use roto_core::{AwsError, AwsResult, Value};
use rusqlite::Connection;

use super::principals::new_entity;
use super::store::{self, Entity, Kind, Relation};
use super::{
    already_exists, delete_conflict, listing, no_such_entity, now, page, required, tag_values, Iam,
};

/// A one-pixel PNG, standing in for the QR code of the seed.
const PNG: &[u8] = &[
    0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52,
    0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1f, 0x15, 0xc4,
    0x89, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x44, 0x41, 0x54, 0x78, 0xda, 0x63, 0x64, 0x60, 0xf8, 0x5f,
    0x0f, 0x00, 0x02, 0x87, 0x01, 0x80, 0xeb, 0x47, 0xba, 0x92, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45,
    0x4e, 0x44, 0xae, 0x42, 0x60, 0x82,
];

fn seed() -> String {
    const CHARS: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
    (0..64)
        .map(|_| CHARS[fastrand::usize(..CHARS.len())] as char)
        .collect()
}

impl Iam {
    /// The device a serial number names.
    pub(super) fn device(&self, c: &Connection, account: &str, serial: &str) -> AwsResult<Entity> {
        let name = serial.rsplit('/').next().unwrap_or_default();
        store::find(c, account, Kind::MfaDevice, name)?
            .filter(|e| e.arn(account) == serial)
            .ok_or_else(|| Kind::MfaDevice.not_found(serial))
    }

    /// The user a device is enabled for, and when.
    fn assignment(
        &self,
        c: &Connection,
        account: &str,
        e: &Entity,
    ) -> AwsResult<Option<(String, i64)>> {
        let user = store::parents(c, account, Relation::UserMfa, &e.name)?
            .into_iter()
            .next();
        Ok(user.map(|u| (u, e.attr_int("EnableDate").unwrap_or(e.created))))
    }

    /// `CreateVirtualMFADevice`.
    pub(super) fn create_virtual_mfa_device(
        &self,
        account: &str,
        input: &Value,
    ) -> AwsResult<Value> {
        let mut e = new_entity(Kind::MfaDevice, input)?;
        let seed = seed();
        e.attrs.insert("Seed".into(), seed.clone().into());
        self.env
            .store
            .transaction(|c| store::insert(c, account, &e))?;
        let device = Value::map()
            .with("SerialNumber", e.arn(account))
            .with("Base32StringSeed", Value::Blob(seed.into_bytes()))
            .with("QRCodePNG", Value::Blob(PNG.to_vec()))
            .with_opt("Tags", (!e.tags.is_empty()).then(|| tag_values(&e)));
        Ok(Value::map().with("VirtualMFADevice", device))
    }

    /// `EnableMFADevice`: one user per device.
    pub(super) fn enable_mfa_device(&self, account: &str, input: &Value) -> AwsResult<Value> {
        self.env.store.transaction(|c| {
            let user = store::get(c, account, Kind::User, required(input, "UserName"))?;
            let mut device = self.device(c, account, required(input, "SerialNumber"))?;
            if self.assignment(c, account, &device)?.is_some() {
                return Err(already_exists("MFA Device is already in use."));
            }
            store::link(c, account, Relation::UserMfa, &user.name, &device.name)?;
            device.attrs.insert("EnableDate".into(), now().into());
            store::update(c, account, &device.name.clone(), &device)?;
            Ok(Value::map())
        })
    }

    /// `DeactivateMFADevice`.
    pub(super) fn deactivate_mfa_device(&self, account: &str, input: &Value) -> AwsResult<Value> {
        let serial = required(input, "SerialNumber");
        self.env.store.transaction(|c| {
            let device = self.device(c, account, serial)?;
            let Some((user, _)) = self.assignment(c, account, &device)? else {
                return Err(no_such_entity(format!(
                    "MFA Device with serial number {serial} does not exist."
                )));
            };
            if input
                .str("UserName")
                .is_some_and(|u| !u.eq_ignore_ascii_case(&user))
            {
                return Err(Kind::User.not_found(required(input, "UserName")));
            }
            store::unlink(c, account, Relation::UserMfa, &user, &device.name)?;
            Ok(Value::map())
        })
    }

    /// The user a device is enabled for, and when; `NoSuchEntity` when it is enabled for
    /// no one, or (given `user`) for someone else.
    fn enabled_for(
        &self,
        c: &Connection,
        account: &str,
        serial: &str,
        user: Option<&str>,
    ) -> AwsResult<(String, i64)> {
        let device = self.device(c, account, serial)?;
        match self.assignment(c, account, &device)? {
            Some((owner, enabled)) if user.is_none_or(|u| u.eq_ignore_ascii_case(&owner)) => {
                Ok((owner, enabled))
            }
            _ => Err(no_such_entity(format!(
                "MFA Device with serial number {serial} does not exist."
            ))),
        }
    }

    /// `GetMFADevice`: the user a device is enabled for.
    pub(super) fn get_mfa_device(&self, account: &str, input: &Value) -> AwsResult<Value> {
        let serial = required(input, "SerialNumber");
        self.env.store.with(|c| {
            if let Some(user) = input.str("UserName") {
                store::get(c, account, Kind::User, user)?;
            }
            let (user, enabled) = self.enabled_for(c, account, serial, input.str("UserName"))?;
            Ok(Value::map()
                .with("UserName", user)
                .with("SerialNumber", serial)
                .with("EnableDate", Value::Timestamp(enabled)))
        })
    }

    /// `ResyncMFADevice`: the two codes must be two successive ones, so they must differ.
    pub(super) fn resync_mfa_device(&self, account: &str, input: &Value) -> AwsResult<Value> {
        self.env.store.with(|c| {
            let user = store::get(c, account, Kind::User, required(input, "UserName"))?;
            self.enabled_for(
                c,
                account,
                required(input, "SerialNumber"),
                Some(&user.name),
            )?;
            if required(input, "AuthenticationCode1") == required(input, "AuthenticationCode2") {
                return Err(AwsError::new(
                    "InvalidAuthenticationCodeException",
                    "Authentication code for device is not valid.",
                ));
            }
            Ok(Value::map())
        })
    }

    /// `DeleteVirtualMFADevice`: refused while the device is enabled for a user.
    pub(super) fn delete_virtual_mfa_device(
        &self,
        account: &str,
        input: &Value,
    ) -> AwsResult<Value> {
        self.env.store.transaction(|c| {
            let device = self.device(c, account, required(input, "SerialNumber"))?;
            if self.assignment(c, account, &device)?.is_some() {
                return Err(delete_conflict("MFA device is still in use."));
            }
            store::delete(c, account, Kind::MfaDevice, &device.name)?;
            Ok(Value::map())
        })
    }

    /// `ListMFADevices`: the devices enabled for a user.
    pub(super) fn list_mfa_devices(&self, account: &str, input: &Value) -> AwsResult<Value> {
        self.env.store.with(|c| {
            let user = store::get(c, account, Kind::User, required(input, "UserName"))?;
            let mut devices = Vec::new();
            for name in store::children(c, account, Relation::UserMfa, &user.name)? {
                devices.extend(store::find(c, account, Kind::MfaDevice, &name)?);
            }
            let (devices, next) = page(devices, |e| e.name.to_lowercase(), input)?;
            let values = devices
                .iter()
                .map(|e| {
                    Value::map()
                        .with("UserName", user.name.as_str())
                        .with("SerialNumber", e.arn(account))
                        .with(
                            "EnableDate",
                            Value::Timestamp(e.attr_int("EnableDate").unwrap_or(e.created)),
                        )
                })
                .collect();
            Ok(listing("MFADevices", values, next))
        })
    }

    /// `ListVirtualMFADevices` (`AssignmentStatus` `Assigned`, `Unassigned` or `Any`).
    pub(super) fn list_virtual_mfa_devices(
        &self,
        account: &str,
        input: &Value,
    ) -> AwsResult<Value> {
        let status = input.str("AssignmentStatus").unwrap_or("Any");
        self.env.store.with(|c| {
            let mut devices = Vec::new();
            for e in store::list(c, account, Kind::MfaDevice, "/")? {
                let assigned = self.assignment(c, account, &e)?;
                let keep = match status {
                    "Assigned" => assigned.is_some(),
                    "Unassigned" => assigned.is_none(),
                    _ => true,
                };
                if keep {
                    devices.push((e, assigned));
                }
            }
            let (devices, next) = page(devices, |(e, _)| e.name.to_lowercase(), input)?;
            let mut values = Vec::new();
            for (e, assigned) in devices {
                let mut v = Value::map().with("SerialNumber", e.arn(account));
                if let Some((user, enabled)) = assigned {
                    if let Some(user) = store::find(c, account, Kind::User, &user)? {
                        v.insert(
                            "User",
                            self.entity_value(c, account, &user, super::principals::View::List)?,
                        );
                    }
                    v.insert("EnableDate", Value::Timestamp(enabled));
                }
                if !e.tags.is_empty() {
                    v.insert("Tags", tag_values(&e));
                }
                values.push(v);
            }
            Ok(listing("VirtualMFADevices", values, next))
        })
    }
}
