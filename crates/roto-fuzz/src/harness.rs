//! Running one target: corpus entries first, then mutated inputs, each under
//! `catch_unwind` on a [`STACK_SIZE`](crate::STACK_SIZE) thread.
//!
//! Before each input runs it is written to `<out>/<target>/current`, so that if it
//! overflows the stack (which aborts the process) the parent finds it there. A panic is
//! caught and the run goes on; the first input to panic at each place in the code is saved
//! as `<out>/<target>/crash-<hash>`.

use std::collections::BTreeSet;
use std::fs::{self, File};
use std::io::{self, Seek, SeekFrom, Write};
use std::panic::{self, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::mutate::Mutator;
use crate::targets::Target;

/// What a run of one target did.
#[derive(Debug, Default)]
pub struct Report {
    /// Inputs run.
    pub execs: u64,
    /// Inputs that panicked.
    pub panics: u64,
    /// The first input that panicked at each place, as saved.
    pub findings: Vec<PathBuf>,
    /// How long the run took.
    pub elapsed: Duration,
    /// How long the slowest input took (it is saved as `<out>/<target>/slowest`).
    pub slowest: Duration,
}

/// A name for an input: FNV-1a of its bytes.
pub fn hash(input: &[u8]) -> String {
    let h = input.iter().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
    });
    format!("{h:016x}")
}

/// Saves a crashing input under `dir` and says where.
pub fn save_crash(dir: &Path, input: &[u8]) -> io::Result<PathBuf> {
    fs::create_dir_all(dir)?;
    let path = dir.join(format!("crash-{}", hash(input)));
    fs::write(&path, input)?;
    Ok(path)
}

/// Runs `target` over `corpus` and then mutations of it until `execs` inputs have run.
pub fn fuzz(
    target: &Target,
    corpus: &[Vec<u8>],
    execs: u64,
    seed: u64,
    out: &Path,
) -> io::Result<Report> {
    let dir = out.join(target.name);
    fs::create_dir_all(&dir)?;
    let mut current = File::create(dir.join("current"))?;
    let mut mutator = Mutator::new(seed, &target.grammar);
    let mut report = Report::default();
    let mut places = BTreeSet::new();
    let started = Instant::now();
    while report.execs < execs {
        let input = match corpus.get(report.execs as usize) {
            Some(entry) => entry.clone(),
            None => mutator.input(corpus),
        };
        remember(&mut current, &input)?;
        let began = Instant::now();
        let survived = survives(target, &input);
        if began.elapsed() > report.slowest {
            report.slowest = began.elapsed();
            fs::write(dir.join("slowest"), &input)?;
        }
        if !survived {
            report.panics += 1;
            if places.insert(last_panic()) {
                report.findings.push(save_crash(&dir, &input)?);
            }
        }
        report.execs += 1;
    }
    report.elapsed = started.elapsed();
    Ok(report)
}

/// Where the last panic happened, as [`record_panics`] noted it.
static LAST_PANIC: Mutex<String> = Mutex::new(String::new());

/// Makes panics note where they happened (for [`fuzz`] to tell findings apart) and print
/// one line instead of a backtrace.
pub fn record_panics() {
    panic::set_hook(Box::new(|info| {
        let at = info.location().map(|l| l.to_string()).unwrap_or_default();
        eprintln!("panic at {at}");
        if let Ok(mut last) = LAST_PANIC.lock() {
            *last = at;
        }
    }));
}

fn last_panic() -> String {
    LAST_PANIC.lock().map(|l| l.clone()).unwrap_or_default()
}

/// Whether `target` runs `input` without panicking.
pub fn survives(target: &Target, input: &[u8]) -> bool {
    panic::catch_unwind(AssertUnwindSafe(|| (target.run)(input))).is_ok()
}

fn remember(file: &mut File, input: &[u8]) -> io::Result<()> {
    file.seek(SeekFrom::Start(0))?;
    file.set_len(0)?;
    file.write_all(input)
}

/// Runs `work` on a thread with tokio's worker stack, returning what it returns.
pub fn on_small_stack<T: Send + 'static>(
    work: impl FnOnce() -> T + Send + 'static,
) -> io::Result<T> {
    std::thread::Builder::new()
        .name("fuzz".into())
        .stack_size(crate::STACK_SIZE)
        .spawn(work)?
        .join()
        .map_err(|_| io::Error::other("the fuzz thread panicked outside a target"))
}
