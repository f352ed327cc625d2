//! The README's flag table is what a new user reads first; this test keeps it true by
//! comparing it with the built binary's `--help`: every flag in one is in the other, with
//! the same `ROTO_*` variable, so `cargo test --workspace` fails when they drift.

use std::collections::BTreeMap;
use std::process::Command;

/// Each flag `--help` documents (besides `--help` and `--version`) and its variable.
fn help_flags() -> BTreeMap<String, String> {
    let output = Command::new(env!("CARGO_BIN_EXE_roto-server"))
        .arg("--help")
        .env("COLUMNS", "10000")
        .output()
        .expect("roto-server --help runs");
    assert!(output.status.success(), "--help failed: {output:?}");
    let help = String::from_utf8(output.stdout).expect("--help is UTF-8");
    let mut flags = BTreeMap::new();
    let mut current: Option<(String, String)> = None;
    for line in help.lines() {
        if let Some(flag) = option_line(line) {
            flags.extend(current.take());
            current = Some((flag, String::new()));
        }
        if let Some((_, text)) = current.as_mut() {
            text.push_str(line);
            text.push(' ');
        }
    }
    flags.extend(current);
    flags.remove("--help");
    flags.remove("--version");
    flags
        .into_iter()
        .map(|(flag, text)| {
            let var = text
                .split_once("[env: ")
                .and_then(|(_, rest)| rest.split_once('='))
                .map(|(var, _)| var.to_string())
                .unwrap_or_default();
            (flag, var)
        })
        .collect()
}

/// The flag an option line of `--help` opens (`  -h, --help`, `      --host <HOST>`);
/// descriptions are indented deeper.
fn option_line(line: &str) -> Option<String> {
    let trimmed = line.trim_start();
    let indent = line.len() - trimmed.len();
    if !(2..10).contains(&indent) || !trimmed.starts_with('-') {
        return None;
    }
    let flag = trimmed
        .split([' ', ',', '='])
        .find(|t| t.starts_with("--"))?;
    Some(flag.to_string())
}

/// Each row of the README's flag table: `| `--flag` | `ROTO_FLAG` | default | meaning |`.
fn readme_flags() -> BTreeMap<String, String> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../README.md");
    let readme = std::fs::read_to_string(path).expect("README.md is readable");
    readme
        .lines()
        .filter(|line| line.starts_with("| `--"))
        .map(|line| {
            let cells: Vec<&str> = line
                .split('|')
                .map(|c| c.trim().trim_matches('`'))
                .collect();
            (
                cells[1].to_string(),
                cells.get(2).copied().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

#[test]
fn readme_flag_table_matches_help_both_ways() {
    let help = help_flags();
    let readme = readme_flags();
    assert!(
        help.len() > 10,
        "too few flags parsed from --help: {help:?}"
    );
    let missing: Vec<&String> = help.keys().filter(|f| !readme.contains_key(*f)).collect();
    let stale: Vec<&String> = readme.keys().filter(|f| !help.contains_key(*f)).collect();
    assert!(
        missing.is_empty(),
        "flags --help documents but README.md's table lacks: {missing:?}"
    );
    assert!(
        stale.is_empty(),
        "flags README.md's table lists but --help does not know: {stale:?}"
    );
    for (flag, var) in &help {
        assert_eq!(
            readme.get(flag),
            Some(var),
            "README.md gives {flag} another variable than --help"
        );
    }
}
