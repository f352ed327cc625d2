//! roto-lua: the `--setup FILE.lua` scripts that seed a server before its port opens.
//!
//! A script is Lua 5.4 in a sandbox (no `io`, no `os.execute`, no `require`, no
//! `loadfile`/`dofile`, text chunks only) with two tables:
//!
//! - `aws.<service>.<Operation>{...}` calls the operation through the in-process
//!   [`Dispatcher`], the same handlers HTTP reaches, with the SDK's input shape, and returns
//!   the output as a table; an AWS error raises a Lua error table with `code`, `message`,
//!   `status`, `service`, `operation`, `script` and `line`. `aws.with{account = ..., region =
//!   ...}(function() ... end)` and a second argument `{account = ..., region = ...}` choose
//!   where calls act.
//! - `roto.read_file`, `roto.env`, `roto.log`, `roto.sleep`, `roto.wait_for`, `roto.zip`
//!   and `roto.json.encode/decode/null` (see `docs/setup-scripts.md`).
//!
//! Scripts run inside the server's tokio runtime as async Lua: every AWS call and every
//! `roto.sleep` awaits, so the event bus and other background tasks keep running during
//! setup. Each script gets a fresh Lua state; the AWS state they build is shared.
//!
//! ```no_run
//! # async fn example(dispatcher: std::sync::Arc<roto_core::Dispatcher>) {
//! let runner = roto_lua::Runner::new(dispatcher, "127.0.0.1:4566");
//! if let Err(e) = runner.run_files(&["setup.lua".into()]).await {
//!     eprintln!("{e}");
//! }
//! # }
//! ```

mod aws;
mod convert;
mod helpers;
mod json;
mod suggest;

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use mlua::{Function, Lua, LuaOptions, StdLib, Table, Value as LuaValue};
use roto_core::Dispatcher;

/// The Lua half of the environment: `aws`, `aws.with`, `roto.wait_for`, the runner.
const PRELUDE: &str = include_str!("prelude.lua");

/// Functions of the `os` library a script keeps: clocks and dates, nothing that acts.
const SAFE_OS: &[&str] = &["clock", "date", "difftime", "time"];

/// A setup script that failed: which script, and a message naming the line and cause.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SetupError {
    /// The script as it was named on the command line.
    pub script: PathBuf,
    /// What went wrong, starting with `script:line:` where Lua knows the line.
    pub message: String,
}

impl fmt::Display for SetupError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "setup script {} failed: {}",
            self.script.display(),
            self.message
        )
    }
}

impl std::error::Error for SetupError {}

/// Runs setup scripts against a dispatcher.
pub struct Runner {
    dispatcher: Arc<Dispatcher>,
    host: String,
}

impl Runner {
    /// A runner calling `dispatcher`; `host` (`127.0.0.1:4566`) is the address URLs that
    /// services return (SQS queue URLs) name, as the Host header does over HTTP.
    pub fn new(dispatcher: Arc<Dispatcher>, host: impl Into<String>) -> Runner {
        Runner {
            dispatcher,
            host: host.into(),
        }
    }

    /// Runs each script in order; stops at the first that fails.
    pub async fn run_files(&self, scripts: &[PathBuf]) -> Result<(), SetupError> {
        for script in scripts {
            self.run_file(script).await?;
        }
        Ok(())
    }

    /// Runs one script file; `roto.read_file` reads relative to its directory.
    pub async fn run_file(&self, script: &Path) -> Result<(), SetupError> {
        let source = std::fs::read(script).map_err(|e| SetupError {
            script: script.to_path_buf(),
            message: format!("cannot read it: {e}"),
        })?;
        let dir = match script.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        self.run_source(script, &dir, &source).await
    }

    /// Runs Lua source named `script` in messages, reading fixtures from `dir`.
    pub async fn run_source(
        &self,
        script: &Path,
        dir: &Path,
        source: &[u8],
    ) -> Result<(), SetupError> {
        let fail = |message: String| SetupError {
            script: script.to_path_buf(),
            message,
        };
        let (lua, runner) = self
            .environment(script, dir)
            .map_err(|e| fail(format!("cannot prepare the Lua environment: {e}")))?;
        // Lua shortens chunk names past 60 bytes from the left, so messages name the file
        // alone; the full path leads the SetupError's message.
        let name = script.file_name().unwrap_or(script.as_os_str());
        let chunk = lua
            .load(source)
            .set_name(format!("@{}", Path::new(name).display()))
            .into_function()
            .map_err(|e| fail(lua_message(&e)))?;
        match runner.call_async::<LuaValue>(chunk).await {
            Ok(LuaValue::Nil) => Ok(()),
            Ok(LuaValue::String(s)) => Err(fail(s.to_string_lossy())),
            Ok(LuaValue::Error(e)) => Err(fail(lua_message(&e))),
            Ok(other) => Err(fail(format!(
                "the script raised {}",
                convert::describe(&other)
            ))),
            Err(e) => Err(fail(lua_message(&e))),
        }
    }

    /// A sandboxed Lua state with `aws` and `roto`, and the prelude's runner.
    fn environment(&self, script: &Path, dir: &Path) -> mlua::Result<(Lua, Function)> {
        let lua = sandbox()?;
        let started = Instant::now();
        let roto = helpers::table(&lua, script, dir)?;
        let primitives = (
            aws::invoke(&lua, self.dispatcher.clone(), self.host.clone())?,
            aws::check_service(&lua, self.dispatcher.clone())?,
            aws::check_operation(&lua, self.dispatcher.clone())?,
            aws::caller(&lua)?,
            roto.get::<Function>("sleep")?,
            lua.create_function(move |_, ()| Ok(started.elapsed().as_secs_f64()))?,
            roto.clone(),
        );
        let (aws, runner): (Table, Function) = lua
            .load(PRELUDE)
            .set_name("=roto prelude")
            .call(primitives)?;
        let globals = lua.globals();
        globals.set("aws", aws)?;
        globals.set("print", roto.get::<Function>("log")?)?;
        globals.set("roto", roto)?;
        Ok((lua, runner))
    }
}

/// A Lua state with only the libraries a setup script needs.
fn sandbox() -> mlua::Result<Lua> {
    let lua = Lua::new_with(
        StdLib::TABLE
            | StdLib::STRING
            | StdLib::MATH
            | StdLib::UTF8
            | StdLib::COROUTINE
            | StdLib::OS,
        LuaOptions::new(),
    )?;
    let globals = lua.globals();
    for name in ["dofile", "loadfile"] {
        globals.raw_set(name, LuaValue::Nil)?;
    }
    let os: Table = globals.get("os")?;
    let safe_os = lua.create_table()?;
    for name in SAFE_OS {
        safe_os.set(*name, os.get::<LuaValue>(*name)?)?;
    }
    globals.set("os", safe_os)?;
    // `load` keeps working on text; binary chunks can break the VM's invariants.
    lua.load(
        r##"local raw, select = load, select
        load = function(chunk, name, _, ...)
          if select("#", ...) > 0 then return raw(chunk, name, "t", ...) end
          return raw(chunk, name, "t")
        end"##,
    )
    .set_name("=roto sandbox")
    .exec()?;
    Ok(lua)
}

/// The message of a Lua error, without mlua's wrapping of errors raised in callbacks.
fn lua_message(error: &mlua::Error) -> String {
    match error {
        mlua::Error::CallbackError { cause, .. } => lua_message(cause),
        mlua::Error::SyntaxError { message, .. } => format!("syntax error: {message}"),
        mlua::Error::RuntimeError(message) => message.clone(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests;
