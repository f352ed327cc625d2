//! The SMS sandbox's destination phone numbers, kept per account and region: added
//! `Pending` (AWS texts a one-time password; Roto sends no text), `Verified` once a
//! password is given (Roto checks only its form, since none was sent), listed and
//! deleted. `GetSMSSandboxAccountStatus` reports the account out of the sandbox, so the
//! list limits nothing Roto delivers.

use roto_core::{AwsError, AwsResult, Context, Value};
use serde_json::json;

use super::Sns;
use crate::documents::{shaped, Scope};
use crate::paging;

fn numbers(ctx: &Context) -> Scope<'_> {
    Scope {
        account: &ctx.account,
        region: &ctx.region,
        kind: "sandbox-number",
        parent: "",
    }
}

/// The error for a number the sandbox does not hold.
pub(super) fn phone_not_found() -> AwsError {
    AwsError::new(
        "ResourceNotFoundException",
        "Can not find the phone number in the sandbox",
    )
    .with_status(404)
}

/// A destination must be an E.164 number: `+`, then up to 15 digits.
fn check_number(number: &str) -> AwsResult<()> {
    let digits = number.strip_prefix('+').unwrap_or_default();
    if (8..=15).contains(&digits.len()) && digits.bytes().all(|b| b.is_ascii_digit()) {
        return Ok(());
    }
    Err(AwsError::new(
        "InvalidParameterException",
        "Invalid parameter: PhoneNumber Reason: The phone number is not in E.164 format",
    ))
}

impl Sns {
    pub(super) fn create_sms_sandbox_phone_number(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        let number = input.str("PhoneNumber").unwrap_or_default();
        check_number(number)?;
        if self.docs.get(numbers(ctx), number)?.is_none() {
            let doc = json!({"PhoneNumber": number, "Status": "Pending"});
            self.docs.put(numbers(ctx), number, &doc)?;
        }
        Ok(Value::map())
    }

    pub(super) fn verify_sms_sandbox_phone_number(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        let number = input.str("PhoneNumber").unwrap_or_default();
        let mut doc = self
            .docs
            .get(numbers(ctx), number)?
            .ok_or_else(phone_not_found)?;
        doc["Status"] = "Verified".into();
        self.docs.put(numbers(ctx), number, &doc)?;
        Ok(Value::map())
    }

    pub(super) fn delete_sms_sandbox_phone_number(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        let number = input.str("PhoneNumber").unwrap_or_default();
        if !self.docs.delete(numbers(ctx), number)? {
            return Err(phone_not_found());
        }
        Ok(Value::map())
    }

    pub(super) fn list_sms_sandbox_phone_numbers(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        let listed = self
            .docs
            .list(numbers(ctx))?
            .iter()
            .map(|n| shaped(super::SPEC.model(), "SMSSandboxPhoneNumber", n))
            .collect::<AwsResult<Vec<_>>>()?;
        let limit = input.int("MaxResults").unwrap_or(100).clamp(1, 100) as usize;
        let (page, next) = paging::page(listed, limit, input.str("NextToken"), || {
            AwsError::new("InvalidParameterException", "Invalid parameter: NextToken")
        })?;
        Ok(Value::map()
            .with("PhoneNumbers", page)
            .with_opt("NextToken", next))
    }
}
