//! The `roto` table's Rust functions: fixtures, environment, logging, sleeping and JSON.
//!
//! Each returns `true, results...` or `false, problem`; the prelude lifts them into
//! functions that raise the problem at the script's line (`roto.wait_for` is written in
//! Lua on top of `roto.sleep`).

use std::path::{Component, Path, PathBuf};
use std::time::Duration;

use mlua::{Lua, MultiValue, Table, Value as LuaValue, Variadic};

use crate::convert::describe;
use crate::json;

/// The longest single `roto.sleep` (a typo of milliseconds for seconds should not hang
/// start-up for hours).
const MAX_SLEEP_SECONDS: f64 = 300.0;

/// Builds the `roto` table for `script`, whose fixtures live in `dir`.
pub(crate) fn table(lua: &Lua, script: &Path, dir: &Path) -> mlua::Result<Table> {
    let roto = lua.create_table()?;
    let dir = dir.to_path_buf();
    roto.set(
        "read_file",
        lua.create_function(move |lua, path: LuaValue| {
            let result = string_arg(&path, "path").and_then(|p| read_fixture(&dir, &p));
            reply(
                lua,
                result.map(|bytes| lua.create_string(bytes).map(LuaValue::String)),
            )
        })?,
    )?;
    roto.set(
        "env",
        lua.create_function(|lua, name: LuaValue| {
            let result = string_arg(&name, "name").map(|n| match std::env::var(n) {
                Ok(v) => lua.create_string(v).map(LuaValue::String),
                Err(_) => Ok(LuaValue::Nil),
            });
            reply(lua, result)
        })?,
    )?;
    let label = script.display().to_string();
    roto.set(
        "log",
        lua.create_function(move |lua, args: Variadic<LuaValue>| {
            let tostring: mlua::Function = lua.globals().get("tostring")?;
            let mut parts = Vec::with_capacity(args.len());
            for arg in args {
                parts.push(tostring.call::<String>(arg)?);
            }
            eprintln!("[setup {label}] {}", parts.join("\t"));
            reply(lua, Ok(Ok(LuaValue::Nil)))
        })?,
    )?;
    roto.set(
        "sleep",
        lua.create_async_function(|lua, seconds: LuaValue| async move {
            let duration = match seconds {
                LuaValue::Integer(i) if (0..=MAX_SLEEP_SECONDS as i64).contains(&i) => {
                    Duration::from_secs(i.unsigned_abs())
                }
                LuaValue::Number(f) if (0.0..=MAX_SLEEP_SECONDS).contains(&f) => {
                    Duration::from_secs_f64(f)
                }
                other => {
                    return reply(
                        &lua,
                        Err(format!(
                        "the duration is a number of seconds from 0 to {MAX_SLEEP_SECONDS}, got {}",
                        describe(&other)
                    )),
                    )
                }
            };
            tokio::time::sleep(duration).await;
            reply(&lua, Ok(Ok(LuaValue::Nil)))
        })?,
    )?;
    roto.set("json", json_table(lua)?)?;
    Ok(roto)
}

fn json_table(lua: &Lua) -> mlua::Result<Table> {
    let t = lua.create_table()?;
    t.set(
        "encode",
        lua.create_function(|lua, value: LuaValue| {
            let result = json::to_json(&value)
                .map(|j| lua.create_string(j.to_string()).map(LuaValue::String));
            reply(lua, result)
        })?,
    )?;
    t.set(
        "decode",
        lua.create_function(|lua, text: LuaValue| {
            let result = string_arg(&text, "text").and_then(|text| {
                serde_json::from_str::<serde_json::Value>(&text)
                    .map_err(|e| format!("not valid JSON: {e}"))
            });
            reply(lua, result.map(|j| json::from_json(lua, &j)))
        })?,
    )?;
    t.set("null", LuaValue::NULL)?;
    Ok(t)
}

/// The `true, value` or `false, problem` reply every primitive gives.
fn reply(lua: &Lua, result: Result<mlua::Result<LuaValue>, String>) -> mlua::Result<MultiValue> {
    Ok(match result {
        Ok(value) => MultiValue::from_iter([LuaValue::Boolean(true), value?]),
        Err(problem) => MultiValue::from_iter([
            LuaValue::Boolean(false),
            LuaValue::String(lua.create_string(problem)?),
        ]),
    })
}

fn string_arg(value: &LuaValue, what: &str) -> Result<String, String> {
    match value {
        LuaValue::String(s) => s
            .to_str()
            .map(|s| s.to_string())
            .map_err(|_| format!("the {what} must be UTF-8")),
        other => Err(format!("the {what} is a string, got {}", describe(other))),
    }
}

/// Reads `path` relative to the script's directory, refusing paths that leave it
/// (absolute paths, `..` above it, or symbolic links pointing outside).
fn read_fixture(dir: &Path, path: &str) -> Result<Vec<u8>, String> {
    let relative = Path::new(path);
    let escapes = relative.is_absolute()
        || relative
            .components()
            .try_fold(0usize, |depth, c| match c {
                Component::ParentDir => depth.checked_sub(1),
                Component::Normal(_) => Some(depth + 1),
                _ => Some(depth),
            })
            .is_none();
    let outside = || {
        format!(
            "'{path}' is outside the script's directory {}; fixtures are read relative to it",
            dir.display()
        )
    };
    if escapes {
        return Err(outside());
    }
    let full: PathBuf = dir.join(relative);
    let canonical = full
        .canonicalize()
        .map_err(|e| format!("cannot read '{path}' ({}): {e}", full.display()))?;
    let root = dir
        .canonicalize()
        .map_err(|e| format!("cannot read the script's directory {}: {e}", dir.display()))?;
    if !canonical.starts_with(&root) {
        return Err(outside());
    }
    std::fs::read(&canonical).map_err(|e| format!("cannot read '{path}' ({}): {e}", full.display()))
}
