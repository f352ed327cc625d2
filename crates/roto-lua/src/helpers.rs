//! The `roto` table's Rust functions: fixtures, environment, logging, sleeping, zip
//! archives and JSON.
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
    roto.set(
        "zip",
        lua.create_function(|lua, files: LuaValue| {
            let result = zip_files(&files)
                .map(|files| lua.create_string(zip_archive(&files)).map(LuaValue::String));
            reply(lua, result)
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

/// The `{name = contents}` table of `roto.zip`, sorted by name so archives are reproducible.
fn zip_files(files: &LuaValue) -> Result<Vec<(String, Vec<u8>)>, String> {
    let LuaValue::Table(table) = files else {
        return Err(format!(
            "the files are a table of name = contents, got {}",
            describe(files)
        ));
    };
    let mut out = Vec::new();
    for pair in table.pairs::<LuaValue, LuaValue>() {
        let (name, contents) = pair.map_err(|e| e.to_string())?;
        let name = string_arg(&name, "file name")?;
        let LuaValue::String(contents) = contents else {
            return Err(format!(
                "the contents of '{name}' are a string, got {}",
                describe(&contents)
            ));
        };
        if name.len() > usize::from(u16::MAX) {
            return Err("a file name is longer than zip's 65,535 bytes".into());
        }
        out.push((name, contents.as_bytes().to_vec()));
    }
    if out.is_empty() {
        return Err("the archive needs at least one file".into());
    }
    let total: usize = out.iter().map(|(n, c)| 2 * n.len() + c.len() + 76).sum();
    if out.len() > usize::from(u16::MAX) || u32::try_from(total).is_err() {
        return Err("the archive would need zip64 (over 65,535 files or 4 GiB)".into());
    }
    out.sort();
    Ok(out)
}

/// A zip archive of `files`, stored uncompressed, every entry executable (so a `provided`
/// runtime's `bootstrap` runs) and dated 1980-01-01, the earliest date zip can record.
fn zip_archive(files: &[(String, Vec<u8>)]) -> Vec<u8> {
    const VERSION: u16 = 20;
    const MADE_BY_UNIX: u16 = 3 << 8 | VERSION;
    const MIDNIGHT: u16 = 0;
    const JANUARY_FIRST_1980: u16 = 1 << 5 | 1;
    const EXECUTABLE_FILE: u32 = 0o100_755 << 16;
    fn u16s(out: &mut Vec<u8>, values: &[u16]) {
        values.iter().for_each(|v| out.extend(v.to_le_bytes()));
    }
    fn u32s(out: &mut Vec<u8>, values: &[u32]) {
        values.iter().for_each(|v| out.extend(v.to_le_bytes()));
    }
    let mut archive = Vec::new();
    let mut directory = Vec::new();
    for (name, contents) in files {
        let offset = archive.len() as u32;
        let crc = crc32fast::hash(contents);
        let size = contents.len() as u32;
        let name_len = name.len() as u16;
        u32s(&mut archive, &[0x0403_4b50]);
        u16s(&mut archive, &[VERSION, 0, 0, MIDNIGHT, JANUARY_FIRST_1980]);
        u32s(&mut archive, &[crc, size, size]);
        u16s(&mut archive, &[name_len, 0]);
        archive.extend(name.as_bytes());
        archive.extend(contents);

        u32s(&mut directory, &[0x0201_4b50]);
        u16s(
            &mut directory,
            &[MADE_BY_UNIX, VERSION, 0, 0, MIDNIGHT, JANUARY_FIRST_1980],
        );
        u32s(&mut directory, &[crc, size, size]);
        u16s(&mut directory, &[name_len, 0, 0, 0, 0]);
        u32s(&mut directory, &[EXECUTABLE_FILE, offset]);
        directory.extend(name.as_bytes());
    }
    let directory_offset = archive.len() as u32;
    let count = files.len() as u16;
    archive.extend(&directory);
    u32s(&mut archive, &[0x0605_4b50]);
    u16s(&mut archive, &[0, 0, count, count]);
    u32s(&mut archive, &[directory.len() as u32, directory_offset]);
    u16s(&mut archive, &[0]);
    archive
}
