//! roto-fuzz: Roto's fuzzer, on the stable toolchain.
//!
//! libFuzzer (cargo-fuzz) needs nightly sanitizers; this crate is a small harness instead: a
//! deterministic, seeded [`mutate::Mutator`] over a committed corpus per target
//! (`corpus/<target>/`), each input run in-process under `catch_unwind` on a thread with a
//! 2 MiB stack, tokio's worker size, so that unbounded recursion shows up as a crash
//! rather than hiding in a big main-thread stack. The binary runs each target in a child
//! process (a stack overflow aborts the process that has it), writing the input it is about
//! to run to a file first, so an abort leaves the crashing input behind. Every crash found
//! is committed under `regressions/<target>/` and replayed by `cargo test`.
//!
//! It is a workspace member and depends on the crates it fuzzes; nothing depends on it.

use std::fs;
use std::path::{Path, PathBuf};

pub mod harness;
pub mod mutate;
pub mod targets;

/// The stack every input runs on: tokio's worker threads have this much.
pub const STACK_SIZE: usize = 2 * 1024 * 1024;

/// `crates/roto-fuzz/<kind>/<target>`.
fn dir(kind: &str, target: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(kind)
        .join(target)
}

/// Where a target's seed inputs are committed.
pub fn corpus_dir(target: &str) -> PathBuf {
    dir("corpus", target)
}

/// Where a target's crashing inputs are committed, once fixed.
pub fn regressions_dir(target: &str) -> PathBuf {
    dir("regressions", target)
}

/// The files of a directory (none if it does not exist), sorted by name.
pub fn load(dir: &Path) -> Vec<Vec<u8>> {
    let Ok(entries) = fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut paths: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file())
        .collect();
    paths.sort();
    paths.iter().filter_map(|p| fs::read(p).ok()).collect()
}
