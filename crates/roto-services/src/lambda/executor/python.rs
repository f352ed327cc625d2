//! Which interpreter runs `python*` functions: the `python3` the PATH names, found once.
//!
//! Version managers put a shell script on the PATH in front of the interpreter. pyenv's
//! shim runs about twenty shell processes before Python starts (60 ms of CPU on the
//! development machine), which every cold start would pay; so the shim is seen through the
//! way `pyenv exec` does it, from pyenv's version files (`PYENV_VERSION`, a
//! `.python-version` in the working directory or above, `$PYENV_ROOT/version`). Any other
//! script, or a pyenv choosing the `system` Python, is asked for its `sys.executable`.

use std::path::{Path, PathBuf};
use std::process::Stdio;

use super::on_path;

/// The interpreter to run, or plain `python3` when the PATH has none.
pub(super) fn interpreter() -> PathBuf {
    let Some(found) = on_path("python3", std::env::var_os("PATH").as_deref()) else {
        return "python3".into();
    };
    if !is_script(&found) {
        return found;
    }
    let cwd = std::env::current_dir().unwrap_or_default();
    pyenv_interpreter(&found, std::env::var("PYENV_VERSION").ok().as_deref(), &cwd)
        .or_else(|| ask(&found))
        .unwrap_or(found)
}

fn is_script(path: &Path) -> bool {
    use std::io::Read;
    let mut start = [0u8; 2];
    std::fs::File::open(path).is_ok_and(|mut f| f.read_exact(&mut start).is_ok() && &start == b"#!")
}

/// The interpreter a pyenv shim at `shim` (`$PYENV_ROOT/shims/python3`) would run, read
/// from pyenv's version files; `None` when `shim` is not pyenv's or no version is found.
fn pyenv_interpreter(shim: &Path, pyenv_version: Option<&str>, cwd: &Path) -> Option<PathBuf> {
    let shims = shim.parent()?;
    if shims.file_name()? != "shims" {
        return None;
    }
    let root = shims.parent()?;
    if !root.join("libexec").join("pyenv").is_file() {
        return None;
    }
    let names = match pyenv_version.filter(|v| !v.trim().is_empty()) {
        Some(v) => v.split(':').map(str::to_string).collect(),
        None => cwd
            .ancestors()
            .map(|dir| dir.join(".python-version"))
            .chain([root.join("version")])
            .find_map(|file| version_file(&file))?,
    };
    names
        .iter()
        .filter(|name| name.as_str() != "system")
        .map(|name| root.join("versions").join(name).join("bin").join("python3"))
        .find(|p| p.is_file())
}

/// The versions a pyenv version file names, one per word, `#` comments skipped.
fn version_file(path: &Path) -> Option<Vec<String>> {
    let text = std::fs::read_to_string(path).ok()?;
    let names: Vec<String> = text
        .lines()
        .filter(|l| !l.trim_start().starts_with('#'))
        .flat_map(str::split_whitespace)
        .map(str::to_string)
        .collect();
    (!names.is_empty()).then_some(names)
}

/// What `program` reports as `sys.executable` (without `site`, whose `.pth` files can cost
/// more than the rest of the question).
fn ask(program: &Path) -> Option<PathBuf> {
    let out = std::process::Command::new(program)
        .args(["-S", "-c", "import sys; print(sys.executable)"])
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .ok()?;
    let path = PathBuf::from(String::from_utf8(out.stdout).ok()?.trim());
    path.is_file().then_some(path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn file(path: &Path, text: &str, mode: u32) {
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(path, text).expect("write");
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).expect("chmod");
    }

    /// A pyenv root with a shim and the given installed versions.
    fn pyenv(versions: &[&str]) -> tempfile::TempDir {
        let root = tempfile::tempdir().expect("tempdir");
        file(&root.path().join("libexec/pyenv"), "#!/bin/sh\n", 0o755);
        file(
            &root.path().join("shims/python3"),
            "#!/usr/bin/env bash\nexec pyenv exec \"$@\"\n",
            0o755,
        );
        for v in versions {
            file(
                &root.path().join(format!("versions/{v}/bin/python3")),
                "",
                0o755,
            );
        }
        root
    }

    fn python(root: &Path, version: &str) -> Option<PathBuf> {
        Some(root.join(format!("versions/{version}/bin/python3")))
    }

    #[test]
    fn the_global_version_file_names_the_interpreter() {
        let root = pyenv(&["3.11.7", "3.12.1"]);
        file(&root.path().join("version"), "# chosen\n3.12.1\n", 0o644);
        let shim = root.path().join("shims/python3");
        let elsewhere = tempfile::tempdir().expect("tempdir");
        assert_eq!(
            pyenv_interpreter(&shim, None, elsewhere.path()),
            python(root.path(), "3.12.1")
        );
    }

    #[test]
    fn pyenv_version_then_local_files_take_precedence() {
        let root = pyenv(&["3.10.13", "3.11.7", "3.12.1"]);
        file(&root.path().join("version"), "3.12.1\n", 0o644);
        let project = tempfile::tempdir().expect("tempdir");
        file(&project.path().join(".python-version"), "3.10.13\n", 0o644);
        let nested = project.path().join("src/app");
        std::fs::create_dir_all(&nested).expect("mkdir");
        let shim = root.path().join("shims/python3");
        assert_eq!(
            pyenv_interpreter(&shim, None, &nested),
            python(root.path(), "3.10.13")
        );
        assert_eq!(
            pyenv_interpreter(&shim, Some("3.11.7"), &nested),
            python(root.path(), "3.11.7")
        );
        assert_eq!(
            pyenv_interpreter(&shim, Some("missing:3.11.7"), &nested),
            python(root.path(), "3.11.7")
        );
    }

    #[test]
    fn system_missing_versions_and_other_scripts_are_left_to_the_question() {
        let root = pyenv(&["3.11.7"]);
        let shim = root.path().join("shims/python3");
        let elsewhere = tempfile::tempdir().expect("tempdir");
        file(&root.path().join("version"), "system\n", 0o644);
        assert_eq!(pyenv_interpreter(&shim, None, elsewhere.path()), None);
        assert_eq!(
            pyenv_interpreter(&shim, Some("3.9.18"), elsewhere.path()),
            None
        );
        let other = elsewhere.path().join("bin/python3");
        file(&other, "#!/bin/sh\nexec python3.11 \"$@\"\n", 0o755);
        assert_eq!(
            pyenv_interpreter(&other, Some("3.11.7"), elsewhere.path()),
            None
        );
    }

    #[test]
    fn the_path_is_searched_in_order_for_an_executable_and_scripts_are_told_apart() {
        let dir = tempfile::tempdir().expect("tempdir");
        file(&dir.path().join("a/python3"), "not executable", 0o644);
        file(&dir.path().join("b/python3"), "#!/bin/sh\n", 0o755);
        file(&dir.path().join("c/python3"), "\x7fELF", 0o755);
        let path = std::env::join_paths(["a", "b", "c"].map(|d| dir.path().join(d))).expect("join");
        let found = on_path("python3", Some(&path)).expect("found");
        assert_eq!(found, dir.path().join("b/python3"));
        assert!(is_script(&found));
        assert!(!is_script(&dir.path().join("c/python3")));
        assert_eq!(on_path("python3", None), None);
    }
}
