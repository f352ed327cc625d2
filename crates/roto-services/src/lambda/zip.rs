//! A small reader for the zip archives functions are deployed in.
//!
//! Lambda accepts zip files with stored or deflated entries; this reads the central
//! directory, checks every entry, and extracts into a directory (keeping Unix permission
//! bits, so a `provided` runtime's `bootstrap` stays executable). Entry names that would
//! escape the target directory (`../`, absolute paths) make the archive invalid.

use std::fs;
use std::io::{self, Write};
use std::path::{Component, Path, PathBuf};

/// One entry of an archive.
#[derive(Debug)]
pub struct Entry {
    /// The path inside the archive.
    pub name: String,
    /// Unix permission bits, when the archive records them.
    pub mode: Option<u32>,
    method: u16,
    data_offset: usize,
    compressed: usize,
    size: usize,
}

/// Why an archive cannot be used.
#[derive(Debug, PartialEq)]
pub struct ZipError(pub String);

fn u16_at(b: &[u8], at: usize) -> Result<u16, ZipError> {
    b.get(at..at + 2)
        .map(|s| u16::from_le_bytes([s[0], s[1]]))
        .ok_or_else(|| ZipError("truncated archive".into()))
}

fn u32_at(b: &[u8], at: usize) -> Result<u32, ZipError> {
    b.get(at..at + 4)
        .map(|s| u32::from_le_bytes([s[0], s[1], s[2], s[3]]))
        .ok_or_else(|| ZipError("truncated archive".into()))
}

/// The entries of an archive, from its central directory.
pub fn entries(zip: &[u8]) -> Result<Vec<Entry>, ZipError> {
    const EOCD: u32 = 0x0605_4b50;
    let search_from = zip.len().saturating_sub(22 + 65_535);
    let eocd = (search_from..=zip.len().saturating_sub(22))
        .rev()
        .find(|&i| u32_at(zip, i).ok() == Some(EOCD))
        .ok_or_else(|| ZipError("no end of central directory".into()))?;
    let count = usize::from(u16_at(zip, eocd + 10)?);
    let mut at = u32_at(zip, eocd + 16)? as usize;
    let mut out = Vec::with_capacity(count);
    for _ in 0..count {
        if u32_at(zip, at)? != 0x0201_4b50 {
            return Err(ZipError("bad central directory entry".into()));
        }
        let made_by = u16_at(zip, at + 4)? >> 8;
        let method = u16_at(zip, at + 10)?;
        let compressed = u32_at(zip, at + 20)? as usize;
        let size = u32_at(zip, at + 24)? as usize;
        let name_len = usize::from(u16_at(zip, at + 28)?);
        let extra_len = usize::from(u16_at(zip, at + 30)?);
        let comment_len = usize::from(u16_at(zip, at + 32)?);
        let external = u32_at(zip, at + 38)?;
        let local = u32_at(zip, at + 42)? as usize;
        let name = zip
            .get(at + 46..at + 46 + name_len)
            .ok_or_else(|| ZipError("truncated archive".into()))?;
        let name = String::from_utf8_lossy(name).into_owned();
        if u32_at(zip, local)? != 0x0403_4b50 {
            return Err(ZipError("bad local header".into()));
        }
        let data_offset = local
            + 30
            + usize::from(u16_at(zip, local + 26)?)
            + usize::from(u16_at(zip, local + 28)?);
        if data_offset + compressed > zip.len() {
            return Err(ZipError("truncated archive".into()));
        }
        if method != 0 && method != 8 {
            return Err(ZipError(format!("unsupported compression method {method}")));
        }
        let mode = (made_by == 3 && external >> 16 != 0).then_some((external >> 16) & 0o7777);
        out.push(Entry {
            name,
            mode,
            method,
            data_offset,
            compressed,
            size,
        });
        at += 46 + name_len + extra_len + comment_len;
    }
    Ok(out)
}

/// The bytes of one entry.
pub fn read(zip: &[u8], entry: &Entry) -> Result<Vec<u8>, ZipError> {
    let raw = &zip[entry.data_offset..entry.data_offset + entry.compressed];
    if entry.method == 0 {
        return Ok(raw.to_vec());
    }
    miniz_oxide::inflate::decompress_to_vec_with_limit(raw, entry.size.max(1))
        .map_err(|e| ZipError(format!("cannot inflate {}: {e:?}", entry.name)))
}

/// The path an entry extracts to under `root`, or `None` when it would escape it.
fn target(root: &Path, name: &str) -> Option<PathBuf> {
    let relative = Path::new(name);
    if !relative
        .components()
        .all(|c| matches!(c, Component::Normal(_) | Component::CurDir))
    {
        return None;
    }
    Some(root.join(relative))
}

/// Checks that every entry can be extracted.
pub fn check(zip: &[u8]) -> Result<(), ZipError> {
    for entry in entries(zip)? {
        if target(Path::new("/"), &entry.name).is_none() {
            return Err(ZipError(format!(
                "entry {} escapes the archive",
                entry.name
            )));
        }
    }
    Ok(())
}

/// Extracts every entry under `root`.
pub fn extract(zip: &[u8], root: &Path) -> io::Result<()> {
    let invalid = |e: ZipError| io::Error::new(io::ErrorKind::InvalidData, e.0);
    for entry in entries(zip).map_err(invalid)? {
        let path = target(root, &entry.name)
            .ok_or_else(|| invalid(ZipError(format!("entry {} escapes", entry.name))))?;
        if entry.name.ends_with('/') {
            fs::create_dir_all(&path)?;
            continue;
        }
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent)?;
        }
        let bytes = read(zip, &entry).map_err(invalid)?;
        fs::File::create(&path)?.write_all(&bytes)?;
        #[cfg(unix)]
        if let Some(mode) = entry.mode {
            use std::os::unix::fs::PermissionsExt;
            fs::set_permissions(&path, fs::Permissions::from_mode(mode | 0o400))?;
        }
    }
    Ok(())
}

/// A stored (uncompressed) archive of `files`, each with Unix mode `0o755` (CloudFormation's
/// inline `ZipFile` code, and tests).
pub(crate) fn stored(files: &[(&str, &[u8])]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut central = Vec::new();
    for (name, data) in files {
        let offset = out.len() as u32;
        let crc = crc(data);
        out.extend_from_slice(&0x0403_4b50u32.to_le_bytes());
        out.extend_from_slice(&[20, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
        out.extend_from_slice(&crc.to_le_bytes());
        out.extend_from_slice(&(data.len() as u32).to_le_bytes());
        out.extend_from_slice(&(data.len() as u32).to_le_bytes());
        out.extend_from_slice(&(name.len() as u16).to_le_bytes());
        out.extend_from_slice(&[0, 0]);
        out.extend_from_slice(name.as_bytes());
        out.extend_from_slice(data);
        central.extend_from_slice(&0x0201_4b50u32.to_le_bytes());
        central.extend_from_slice(&[20, 3, 20, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
        central.extend_from_slice(&crc.to_le_bytes());
        central.extend_from_slice(&(data.len() as u32).to_le_bytes());
        central.extend_from_slice(&(data.len() as u32).to_le_bytes());
        central.extend_from_slice(&(name.len() as u16).to_le_bytes());
        central.extend_from_slice(&[0; 8]);
        central.extend_from_slice(&((0o100_755u32) << 16).to_le_bytes());
        central.extend_from_slice(&offset.to_le_bytes());
        central.extend_from_slice(name.as_bytes());
    }
    let cd_offset = out.len() as u32;
    out.extend_from_slice(&central);
    out.extend_from_slice(&0x0605_4b50u32.to_le_bytes());
    out.extend_from_slice(&[0, 0, 0, 0]);
    out.extend_from_slice(&(files.len() as u16).to_le_bytes());
    out.extend_from_slice(&(files.len() as u16).to_le_bytes());
    out.extend_from_slice(&(central.len() as u32).to_le_bytes());
    out.extend_from_slice(&cd_offset.to_le_bytes());
    out.extend_from_slice(&[0, 0]);
    out
}

fn crc(data: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &b in data {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ 0xEDB8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    #[test]
    fn stored_archives_list_and_extract_with_modes() {
        let zip = stored(&[("app.py", b"print(1)"), ("lib/x.txt", b"x")]);
        let names: Vec<String> = entries(&zip).unwrap().into_iter().map(|e| e.name).collect();
        assert_eq!(names, ["app.py", "lib/x.txt"]);
        let dir = tempfile::tempdir().unwrap();
        extract(&zip, dir.path()).unwrap();
        assert_eq!(fs::read(dir.path().join("lib/x.txt")).unwrap(), b"x");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = fs::metadata(dir.path().join("app.py"))
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o755);
        }
    }

    #[test]
    fn garbage_and_escaping_entries_are_rejected() {
        assert!(entries(b"not a zip").is_err());
        assert!(check(&stored(&[("../evil", b"x")])).is_err());
        assert!(check(&stored(&[("/abs", b"x")])).is_err());
        assert!(check(&stored(&[("ok/fine", b"x")])).is_ok());
    }
}
