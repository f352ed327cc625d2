//! Stack aliases: `SetAlias` gives a stack a second name (at most one), unique among the
//! account and region's stack names and aliases, that every operation taking a
//! `StackName` accepts (the lookup is [`store::find_stack`]'s); `RemoveAlias` takes it
//! away. The stack's id, resources and name stay as they are.

use roto_core::{AwsError, AwsResult, Context, Value};

use super::stacks::named;
use super::{store, validation, Inner};

pub(crate) fn set_alias(inner: &Inner, ctx: &Context, input: &Value) -> AwsResult<Value> {
    let alias = input.str("AliasName").unwrap_or_default();
    check(alias)?;
    let mut stack = named(inner, ctx, input.str("StackName").unwrap_or_default())?;
    let store = inner.store()?;
    if store::find_stack(store, ctx, alias)?.is_some() {
        return Err(AwsError::new(
            "AlreadyExistsException",
            format!("A stack or an alias named {alias} already exists"),
        )
        .with_status(400));
    }
    if let Some(current) = &stack.meta.alias {
        return Err(AwsError::new(
            "LimitExceededException",
            format!(
                "Stack {} already has the alias {current}: remove it before setting another",
                stack.name
            ),
        )
        .with_status(400));
    }
    stack.meta.alias = Some(alias.to_string());
    store::put_stack(store, &stack)?;
    Ok(Value::map())
}

pub(crate) fn remove_alias(inner: &Inner, ctx: &Context, input: &Value) -> AwsResult<Value> {
    let alias = input.str("AliasName").unwrap_or_default();
    let store = inner.store()?;
    let Some(mut stack) =
        store::find_stack(store, ctx, alias)?.filter(|s| s.meta.alias.as_deref() == Some(alias))
    else {
        return Err(validation(format!("Alias {alias} does not exist")));
    };
    stack.meta.alias = None;
    store::put_stack(store, &stack)?;
    Ok(Value::map())
}

/// An alias is letters, digits and hyphens, starting with a letter, at most 128 long.
fn check(alias: &str) -> AwsResult<()> {
    let valid = alias.len() <= 128
        && alias.starts_with(|c: char| c.is_ascii_alphabetic())
        && alias.chars().all(|c| c.is_ascii_alphanumeric() || c == '-');
    if valid {
        return Ok(());
    }
    Err(validation(format!(
        "1 validation error detected: Value '{alias}' at 'aliasName' failed to satisfy constraint: Member must satisfy regular expression pattern: [a-zA-Z][-a-zA-Z0-9]*"
    )))
}
