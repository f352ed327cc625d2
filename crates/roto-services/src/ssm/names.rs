//! Parameter names, hierarchies, selectors and labels, with the errors AWS gives for each.

use roto_core::{AwsError, AwsResult, Context};

/// The most levels a parameter hierarchy may have.
const MAX_LEVELS: usize = 15;

/// What a `name:selector` suffix picks.
#[derive(Debug, Clone, PartialEq)]
pub enum Selector {
    /// A version number (`name:3`).
    Version(i64),
    /// A label (`name:prod`).
    Label(String),
}

impl Selector {
    /// The selector as AWS echoes it in `Parameter.Selector` (`:3`, `:prod`).
    pub fn echo(&self) -> String {
        match self {
            Selector::Version(v) => format!(":{v}"),
            Selector::Label(l) => format!(":{l}"),
        }
    }
}

/// The parameter's ARN.
pub fn arn(ctx: &Context, name: &str) -> String {
    let sep = if name.starts_with('/') { "" } else { "/" };
    format!(
        "arn:aws:ssm:{}:{}:parameter{sep}{name}",
        ctx.region, ctx.account
    )
}

/// The names a reference may mean (a name, or an ARN whose resource names `/x` or `x`) and
/// the selector after it.
pub fn parse_reference(reference: &str) -> AwsResult<(Vec<String>, Option<Selector>)> {
    let rest = match reference.strip_prefix("arn:") {
        Some(arn) => {
            let resource = arn.splitn(5, ':').nth(4).unwrap_or_default();
            resource.strip_prefix("parameter").unwrap_or(resource)
        }
        None => reference,
    };
    let (name, selector) = match rest.split_once(':') {
        Some((name, selector)) => {
            if selector.is_empty() || selector.contains(':') {
                return Err(AwsError::validation(format!(
                    "Invalid parameter name or selector: {reference}"
                )));
            }
            let parsed = match selector.parse::<i64>() {
                Ok(v) => Selector::Version(v),
                Err(_) => Selector::Label(selector.to_string()),
            };
            (name, Some(parsed))
        }
        None => (rest, None),
    };
    let mut candidates = vec![name.to_string()];
    if reference.starts_with("arn:") {
        if let Some(bare) = name.strip_prefix('/') {
            candidates.push(bare.to_string());
        }
    }
    Ok((candidates, selector))
}

fn invalid_name() -> AwsError {
    AwsError::validation(
        "Parameter name: can't be prefixed with \"aws\" or \"ssm\" (case-insensitive). It must use only letters, numbers, or the following symbols: . (period), - (hyphen), _ (underscore). Special characters are not allowed. All sub-paths, if specified, must use the forward slash symbol \"/\". Valid example: /get/parameters2-/by1./path0_.",
    )
}

/// Checks a name PutParameter is asked to create.
pub fn check_name(name: &str) -> AwsResult<()> {
    if !name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "_.-/".contains(c))
    {
        return Err(invalid_name());
    }
    if name.contains('/') && !name.starts_with('/') {
        return Err(AwsError::validation(
            "Parameter name must be a fully qualified name.",
        ));
    }
    if name.contains("//") || (name.len() > 1 && name.ends_with('/')) {
        return Err(invalid_name());
    }
    let lower = name.trim_start_matches('/').to_ascii_lowercase();
    if lower.starts_with("aws") || lower.starts_with("ssm") {
        if name.to_ascii_lowercase().starts_with("/aws/") {
            return Err(AwsError::new(
                "AccessDeniedException",
                format!("No access to reserved parameter name: {name}."),
            ));
        }
        return Err(invalid_name());
    }
    if name.split('/').filter(|s| !s.is_empty()).count() > MAX_LEVELS {
        return Err(AwsError::new(
            "HierarchyLevelLimitExceededException",
            "A hierarchy can have a maximum of 15 levels. For more information, see Requirements and constraints for parameter names in the AWS Systems Manager User Guide.",
        ));
    }
    Ok(())
}

/// Whether `label` may label a parameter version.
pub fn valid_label(label: &str) -> bool {
    let lower = label.to_ascii_lowercase();
    !label.is_empty()
        && label.len() <= 100
        && !lower.starts_with("aws")
        && !lower.starts_with("ssm")
        && !label.starts_with(|c: char| c.is_ascii_digit())
        && label
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "._-".contains(c))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references_split_into_names_and_selectors() {
        assert_eq!(
            parse_reference("/app/db:3").unwrap(),
            (vec!["/app/db".to_string()], Some(Selector::Version(3)))
        );
        assert_eq!(
            parse_reference("/app/db:prod").unwrap(),
            (
                vec!["/app/db".to_string()],
                Some(Selector::Label("prod".into()))
            )
        );
        assert_eq!(
            parse_reference("arn:aws:ssm:us-east-1:123456789012:parameter/plain").unwrap(),
            (vec!["/plain".to_string(), "plain".to_string()], None)
        );
        assert!(parse_reference("/a:1:2").is_err());
    }

    #[test]
    fn names_follow_the_hierarchy_and_prefix_rules() {
        assert!(check_name("/app/db.url-1_x").is_ok());
        assert!(check_name("plain").is_ok());
        assert_eq!(
            check_name("app/db").unwrap_err().code,
            "ValidationException"
        );
        assert_eq!(
            check_name("/aws/x").unwrap_err().code,
            "AccessDeniedException"
        );
        assert_eq!(
            check_name("ssm-thing").unwrap_err().code,
            "ValidationException"
        );
        assert_eq!(
            check_name("/bad name").unwrap_err().code,
            "ValidationException"
        );
        let deep = "/a".repeat(16);
        assert_eq!(
            check_name(&deep).unwrap_err().code,
            "HierarchyLevelLimitExceededException"
        );
    }

    #[test]
    fn labels_refuse_reserved_prefixes_and_leading_digits() {
        assert!(valid_label("prod"));
        assert!(!valid_label("awsprod"));
        assert!(!valid_label("1st"));
        assert!(!valid_label("has space"));
    }
}
