//! How staging labels move between a secret's versions.
//!
//! A label is on at most one version. Attaching it to a version takes it off whichever
//! version had it; when the label is `AWSCURRENT`, the version that loses it gains
//! `AWSPREVIOUS` (which in turn leaves its former holder), as AWS does. A version left
//! without labels is deprecated: kept, but hidden from `ListSecretVersionIds` unless asked.

/// The label of the current version.
pub const CURRENT: &str = "AWSCURRENT";
/// The label AWS gives the version that was current before.
pub const PREVIOUS: &str = "AWSPREVIOUS";
/// The label of the version a rotation is creating.
pub const PENDING: &str = "AWSPENDING";

/// A version id and its labels.
pub type Labels = (String, Vec<String>);

/// The version that holds `label`.
pub fn holder<'a>(versions: &'a [Labels], label: &str) -> Option<&'a str> {
    versions
        .iter()
        .find(|(_, labels)| labels.iter().any(|l| l == label))
        .map(|(id, _)| id.as_str())
}

/// The labels of `version`.
pub fn holder_labels(versions: &[Labels], version: &str) -> Vec<String> {
    versions
        .iter()
        .find(|(id, _)| id == version)
        .map(|(_, labels)| labels.clone())
        .unwrap_or_default()
}

fn detach(versions: &mut [Labels], label: &str) {
    for (_, labels) in versions.iter_mut() {
        labels.retain(|l| l != label);
    }
}

fn add(versions: &mut [Labels], version: &str, label: &str) {
    if let Some((_, labels)) = versions.iter_mut().find(|(id, _)| id == version) {
        if !labels.iter().any(|l| l == label) {
            labels.push(label.to_string());
        }
    }
}

/// Attaches `label` to `version`, moving it (and, for `AWSCURRENT`, `AWSPREVIOUS`) as AWS
/// does.
pub fn attach(versions: &mut [Labels], version: &str, label: &str) {
    let previous = holder(versions, label).map(str::to_string);
    if previous.as_deref() == Some(version) {
        return;
    }
    detach(versions, label);
    add(versions, version, label);
    if label == CURRENT {
        if let Some(previous) = previous {
            detach(versions, PREVIOUS);
            add(versions, &previous, PREVIOUS);
        }
    }
}

/// Removes `label` from `version`.
pub fn remove(versions: &mut [Labels], version: &str, label: &str) {
    if let Some((_, labels)) = versions.iter_mut().find(|(id, _)| id == version) {
        labels.retain(|l| l != label);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn versions(spec: &[(&str, &[&str])]) -> Vec<Labels> {
        spec.iter()
            .map(|(id, labels)| {
                (
                    id.to_string(),
                    labels.iter().map(|l| l.to_string()).collect(),
                )
            })
            .collect()
    }

    #[test]
    fn moving_current_makes_the_old_current_previous() {
        let mut v = versions(&[
            ("v1", &["AWSPREVIOUS"]),
            ("v2", &["AWSCURRENT"]),
            ("v3", &[]),
        ]);
        attach(&mut v, "v3", CURRENT);
        assert_eq!(
            v,
            versions(&[
                ("v1", &[]),
                ("v2", &["AWSPREVIOUS"]),
                ("v3", &["AWSCURRENT"])
            ])
        );
    }

    #[test]
    fn moving_current_back_to_previous_swaps_the_two() {
        let mut v = versions(&[("v1", &["AWSPREVIOUS"]), ("v2", &["AWSCURRENT"])]);
        attach(&mut v, "v1", CURRENT);
        assert_eq!(
            v,
            versions(&[("v1", &["AWSCURRENT"]), ("v2", &["AWSPREVIOUS"])])
        );
    }

    #[test]
    fn other_labels_move_alone_and_reattaching_changes_nothing() {
        let mut v = versions(&[("v1", &["AWSCURRENT", "blue"]), ("v2", &["AWSPENDING"])]);
        attach(&mut v, "v2", "blue");
        attach(&mut v, "v1", CURRENT);
        assert_eq!(
            v,
            versions(&[("v1", &["AWSCURRENT"]), ("v2", &["AWSPENDING", "blue"])])
        );
        remove(&mut v, "v2", "AWSPENDING");
        assert_eq!(holder(&v, "AWSPENDING"), None);
    }
}
