//! Which strings a definition may use as paths: reference paths (`ResultPath`), paths
//! (`InputPath`, `ItemsPath`, which may start with a variable's name), and the values of `.$` fields (a path, a context path or an
//! intrinsic function call), read by roto-jsonpath and the intrinsic parser.

use roto_jsonpath::Path;

use super::intrinsics;

/// Whether `text` is a JSONPath a field may hold; `ResultPath` takes only a definite
/// reference path into the input.
pub(super) fn valid_path(text: &str, reference: bool) -> bool {
    if let Some((_, rest)) = crate::stepfunctions::interpreter::io::variable_path(text) {
        return !reference && Path::parse(&rest).is_ok();
    }
    match Path::parse(text) {
        Ok(path) => !reference || (path.is_definite() && !path.is_context()),
        Err(_) => false,
    }
}

/// Whether `text` may be the value of a `.$` field.
pub(super) fn valid_dynamic(text: &str) -> bool {
    if text.starts_with("States.") {
        intrinsics::parse(text).is_ok()
    } else {
        valid_path(text, false)
    }
}
