//! Ready hooks (`--ready-hook`): shell scripts run once the port is open, the way
//! LocalStack runs `/etc/localstack/init/ready.d`, so that a project coming from LocalStack
//! keeps its `awslocal` scripts.
//!
//! A directory runs its executable files in name order (hidden and non-executable files are
//! skipped, the latter with a warning); a file runs itself. Hooks run one after another, with
//! `AWS_ENDPOINT_URL`, `AWS_ENDPOINT_URL_S3`, the fake credentials `test`/`test` and the
//! region in their environment, and an `awslocal` on their `PATH` that runs `aws` with
//! `--endpoint-url` pointing at Roto. Their output goes to the server's stderr, each line
//! prefixed with the script's name. A failing hook is reported there and as `ERROR` in
//! `/_localstack/init`; the server keeps running, as LocalStack does. Lua setup scripts,
//! which run before the port opens, remain the way to seed state before anyone can call.

use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use tokio::io::{AsyncBufReadExt, AsyncRead, BufReader};
use tokio::process::Command;

/// Where a hook is, in LocalStack's words.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    /// Not started yet.
    Unknown,
    /// Running now.
    Running,
    /// Exited 0.
    Successful,
    /// Exited otherwise, or could not start.
    Error,
}

impl State {
    /// The name `/_localstack/init` reports.
    pub fn name(self) -> &'static str {
        match self {
            State::Unknown => "UNKNOWN",
            State::Running => "RUNNING",
            State::Successful => "SUCCESSFUL",
            State::Error => "ERROR",
        }
    }
}

/// One hook.
#[derive(Debug, Clone)]
pub struct Script {
    /// Its file name, as logs and `/_localstack/init` show it.
    pub name: String,
    /// Where it is.
    path: PathBuf,
    /// Where it is at.
    pub state: State,
}

/// The hooks of one server and how far they have got.
#[derive(Debug, Default)]
pub struct Hooks {
    scripts: Mutex<Vec<Script>>,
    completed: AtomicBool,
}

/// What a hook's environment says about the server.
pub struct HookEnv {
    /// The server's URL (`http://127.0.0.1:4566`).
    pub endpoint: String,
    /// The default region.
    pub region: String,
}

impl Hooks {
    /// Finds the hooks the `--ready-hook` paths name, or says which path is unusable.
    pub fn discover(paths: &[PathBuf]) -> Result<Hooks, String> {
        let mut scripts = Vec::new();
        for path in paths {
            let meta = std::fs::metadata(path)
                .map_err(|e| format!("--ready-hook {}: {e}", path.display()))?;
            if meta.is_dir() {
                scripts.extend(directory_scripts(path)?);
            } else {
                scripts.push(script(path.clone()));
            }
        }
        Ok(Hooks {
            scripts: Mutex::new(scripts),
            completed: AtomicBool::new(false),
        })
    }

    /// Whether every hook has run, and each hook's name and state, in run order.
    pub fn snapshot(&self) -> (bool, Vec<Script>) {
        let scripts = self.lock().clone();
        (self.completed.load(Ordering::Acquire), scripts)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Script>> {
        self.scripts.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn set_state(&self, index: usize, state: State) {
        if let Some(script) = self.lock().get_mut(index) {
            script.state = state;
        }
    }

    /// Runs every hook in order, then marks the stage completed.
    pub async fn run(self: Arc<Self>, env: HookEnv) {
        let scripts = self.snapshot().1;
        let shim = (!scripts.is_empty()).then(awslocal_shim).flatten();
        let mut failed = 0;
        for (index, script) in scripts.iter().enumerate() {
            self.set_state(index, State::Running);
            let state = match run_one(script, &env, shim.as_deref()).await {
                Ok(status) if status.success() => State::Successful,
                Ok(status) => {
                    eprintln!("roto-server: ready hook {} failed: {status}", script.name);
                    State::Error
                }
                Err(e) => {
                    eprintln!(
                        "roto-server: ready hook {} could not run: {}",
                        script.name,
                        cannot_run(&script.path, &e)
                    );
                    State::Error
                }
            };
            failed += usize::from(state == State::Error);
            self.set_state(index, state);
        }
        if failed > 0 {
            eprintln!(
                "roto-server: {failed} of {} ready hooks failed; the server keeps running \
                 (GET /_localstack/init lists them)",
                scripts.len()
            );
        }
        if let Some(dir) = shim {
            let _ = std::fs::remove_dir_all(dir);
        }
        self.completed.store(true, Ordering::Release);
    }
}

fn script(path: PathBuf) -> Script {
    let name = path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    Script {
        name,
        path,
        state: State::Unknown,
    }
}

/// A directory's hooks: its executable, non-hidden files, in name order.
fn directory_scripts(dir: &Path) -> Result<Vec<Script>, String> {
    let entries =
        std::fs::read_dir(dir).map_err(|e| format!("--ready-hook {}: {e}", dir.display()))?;
    let mut paths: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| path.is_file())
        .filter(|path| {
            path.file_name()
                .is_some_and(|n| !n.to_string_lossy().starts_with('.'))
        })
        .collect();
    paths.sort();
    let (run, skipped): (Vec<PathBuf>, Vec<PathBuf>) = paths.into_iter().partition(is_executable);
    for path in skipped {
        eprintln!(
            "roto-server: warning: ready hook {} is not executable and will not run (chmod +x)",
            path.display()
        );
    }
    Ok(run.into_iter().map(script).collect())
}

#[cfg(unix)]
fn is_executable(path: &PathBuf) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.permissions().mode() & 0o111 != 0)
}

#[cfg(not(unix))]
fn is_executable(_: &PathBuf) -> bool {
    true
}

/// A directory holding an `awslocal` that runs `aws --endpoint-url`, for hooks written for
/// LocalStack (the endpoint flag, because some AWS CLI v1 commands, SQS's among them,
/// ignore `AWS_ENDPOINT_URL`).
fn awslocal_shim() -> Option<PathBuf> {
    let dir = std::env::temp_dir().join(format!("roto-hooks-{}", std::process::id()));
    let file = dir.join("awslocal");
    std::fs::create_dir_all(&dir).ok()?;
    let script = "#!/bin/sh\nexec aws --endpoint-url \"$AWS_ENDPOINT_URL\" \"$@\"\n";
    std::fs::write(&file, script).ok()?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o755)).ok()?;
    }
    Some(dir)
}

/// Why a hook could not start. A script whose `#!` interpreter is missing (Roto's container
/// image has no shell) fails to start as if the script itself were missing: say which is.
fn cannot_run(path: &Path, error: &std::io::Error) -> String {
    let interpreter = std::fs::read(path).ok().and_then(|text| {
        let line = text.strip_prefix(b"#!")?.split(|b| *b == b'\n').next()?;
        let line = String::from_utf8_lossy(line);
        line.split_whitespace().next().map(str::to_string)
    });
    match interpreter {
        Some(program)
            if error.kind() == std::io::ErrorKind::NotFound && !Path::new(&program).exists() =>
        {
            format!("its interpreter {program} is not installed here ({error})")
        }
        _ => error.to_string(),
    }
}

/// Runs one hook to its end, its output on stderr line by line.
async fn run_one(
    script: &Script,
    env: &HookEnv,
    shim: Option<&Path>,
) -> std::io::Result<ExitStatus> {
    let mut command = Command::new(&script.path);
    command
        .env("AWS_ENDPOINT_URL", &env.endpoint)
        .env("AWS_ENDPOINT_URL_S3", &env.endpoint)
        .env("AWS_ACCESS_KEY_ID", "test")
        .env("AWS_SECRET_ACCESS_KEY", "test")
        .env("AWS_DEFAULT_REGION", &env.region)
        .env("AWS_REGION", &env.region)
        .env_remove("AWS_SESSION_TOKEN")
        .env_remove("AWS_PROFILE")
        .env_remove("AWS_DEFAULT_PROFILE")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    if let Some(shim) = shim {
        let path = std::env::var_os("PATH").unwrap_or_default();
        let dirs = std::iter::once(shim.to_path_buf()).chain(std::env::split_paths(&path));
        if let Ok(joined) = std::env::join_paths(dirs) {
            command.env("PATH", joined);
        }
    }
    let mut child = command.spawn()?;
    let out = child.stdout.take().map(|o| relay(&script.name, o));
    let err = child.stderr.take().map(|e| relay(&script.name, e));
    let status = child.wait().await;
    for relay in [out, err].into_iter().flatten() {
        let _ = relay.await;
    }
    status
}

/// Copies a hook's output to stderr, each line prefixed with the hook's name.
fn relay(
    name: &str,
    output: impl AsyncRead + Unpin + Send + 'static,
) -> tokio::task::JoinHandle<()> {
    let prefix = format!("[{name}]");
    tokio::spawn(async move {
        let mut reader = BufReader::new(output);
        let mut line = Vec::new();
        while reader.read_until(b'\n', &mut line).await.unwrap_or(0) > 0 {
            let text = String::from_utf8_lossy(&line);
            eprintln!("{prefix} {}", text.trim_end_matches(['\n', '\r']));
            line.clear();
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_script_whose_interpreter_is_missing_says_so() {
        let dir = std::env::temp_dir().join(format!("roto-hooks-shebang-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let script = dir.join("01-seed.sh");
        std::fs::write(&script, "#!/no/such/sh -e\necho hi\n").unwrap();
        let missing = std::io::Error::from(std::io::ErrorKind::NotFound);
        assert!(cannot_run(&script, &missing)
            .starts_with("its interpreter /no/such/sh is not installed here"));
        std::fs::write(&script, "#!/bin/sh\necho hi\n").unwrap();
        assert_eq!(cannot_run(&script, &missing), missing.to_string());
        let denied = std::io::Error::from(std::io::ErrorKind::PermissionDenied);
        assert_eq!(cannot_run(&script, &denied), denied.to_string());
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn a_missing_path_is_refused_by_name() {
        let err = Hooks::discover(&[PathBuf::from("/no/such/hook.sh")]).unwrap_err();
        assert!(err.contains("/no/such/hook.sh"), "{err}");
    }

    #[cfg(unix)]
    #[test]
    fn a_directory_gives_its_executable_files_in_name_order() {
        use std::os::unix::fs::PermissionsExt;
        let dir = std::env::temp_dir().join(format!("roto-hooks-test-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("sub")).unwrap();
        for (name, mode) in [
            ("b.sh", 0o755),
            ("a.sh", 0o700),
            ("c.txt", 0o644),
            (".h", 0o755),
        ] {
            std::fs::write(dir.join(name), "#!/bin/sh\n").unwrap();
            std::fs::set_permissions(dir.join(name), std::fs::Permissions::from_mode(mode))
                .unwrap();
        }
        let hooks = Hooks::discover(std::slice::from_ref(&dir)).unwrap();
        let (completed, scripts) = hooks.snapshot();
        let names: Vec<&str> = scripts.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["a.sh", "b.sh"]);
        assert!(!completed);
        assert!(scripts.iter().all(|s| s.state == State::Unknown));
        std::fs::remove_dir_all(dir).unwrap();
    }
}
