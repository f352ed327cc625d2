//! `roto-fuzz [--execs N] [--seed S] [--jobs J] [--out DIR] [TARGET...]`: runs every target
//! (or those named) for N executions each, J child processes at a time, and exits non-zero
//! if any input panicked, overflowed the stack or hung. `--child TARGET` is the child's
//! side: it runs one target in this process and prints its report line.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitCode, Stdio};
use std::time::{Duration, Instant};
use std::{env, fs, io, thread};

use roto_fuzz::harness::{self, on_small_stack};
use roto_fuzz::targets::{target, TARGETS};
use roto_fuzz::{corpus_dir, load};

/// A child that runs longer than this is hung.
const TIME_LIMIT: Duration = Duration::from_secs(300);

struct Options {
    execs: u64,
    seed: u64,
    jobs: usize,
    out: PathBuf,
    child: Option<String>,
    targets: Vec<String>,
}

fn options() -> Result<Options, String> {
    let mut o = Options {
        execs: 10_000,
        seed: 1,
        jobs: 2,
        out: PathBuf::from("target/fuzz-findings"),
        child: None,
        targets: Vec::new(),
    };
    let mut args = env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = || args.next().ok_or(format!("{arg} needs a value"));
        match arg.as_str() {
            "--execs" => o.execs = value()?.parse().map_err(|_| "--execs: a number")?,
            "--seed" => o.seed = value()?.parse().map_err(|_| "--seed: a number")?,
            "--jobs" => o.jobs = value()?.parse().map_err(|_| "--jobs: a number")?,
            "--out" => o.out = PathBuf::from(value()?),
            "--child" => o.child = Some(value()?),
            name if target(name).is_some() => o.targets.push(name.to_string()),
            other => return Err(format!("unknown argument or target: {other}")),
        }
    }
    if o.targets.is_empty() {
        o.targets = TARGETS.iter().map(|t| t.name.to_string()).collect();
    }
    Ok(o)
}

/// The child: one target, in this process, on a small stack.
fn child(name: &str, o: &Options) -> ExitCode {
    let Some(t) = target(name) else {
        return ExitCode::FAILURE;
    };
    harness::record_panics();
    let (execs, seed, out) = (o.execs, o.seed, o.out.clone());
    let corpus = load(&corpus_dir(name));
    match on_small_stack(move || harness::fuzz(t, &corpus, execs, seed, &out)) {
        Ok(Ok(report)) => {
            println!(
                "{name}: {} execs in {:.1}s (slowest {:.1}ms), {} panicking input(s) at {} place(s)",
                report.execs,
                report.elapsed.as_secs_f64(),
                report.slowest.as_secs_f64() * 1000.0,
                report.panics,
                report.findings.len()
            );
            for path in &report.findings {
                println!("  {}", path.display());
            }
            if report.findings.is_empty() {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            }
        }
        Ok(Err(e)) | Err(e) => {
            eprintln!("{name}: {e}");
            ExitCode::FAILURE
        }
    }
}

fn spawn(name: &str, o: &Options) -> io::Result<Child> {
    Command::new(env::current_exe()?)
        .args(["--child", name, "--execs", &o.execs.to_string()])
        .args(["--seed", &o.seed.to_string(), "--out"])
        .arg(&o.out)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
}

/// Waits for a child, killing it past [`TIME_LIMIT`]; whether it passed.
fn finish(name: &str, mut child: Child, started: Instant, out: &Path) -> io::Result<bool> {
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break Some(status);
        }
        if started.elapsed() > TIME_LIMIT {
            child.kill()?;
            child.wait()?;
            break None;
        }
        thread::sleep(Duration::from_millis(20));
    };
    let report = io::read_to_string(child.stdout.take().ok_or(io::ErrorKind::BrokenPipe)?)?;
    print!("{report}");
    match status {
        Some(s) if s.success() => Ok(true),
        Some(s) if s.code() == Some(1) => Ok(false),
        other => {
            let what = if other.is_none() {
                "hung"
            } else {
                "aborted (stack overflow?)"
            };
            let dir = out.join(name);
            match fs::read(dir.join("current")) {
                Ok(input) => {
                    let saved = harness::save_crash(&dir, &input)?;
                    println!("{name}: {what} on {}", saved.display());
                }
                Err(_) => println!("{name}: {what} before its first input"),
            }
            Ok(false)
        }
    }
}

fn parent(o: &Options) -> io::Result<bool> {
    let started = Instant::now();
    let mut pending: Vec<&String> = o.targets.iter().rev().collect();
    let mut running: Vec<(String, Child, Instant)> = Vec::new();
    let mut passed = true;
    while !pending.is_empty() || !running.is_empty() {
        while running.len() < o.jobs.max(1) {
            let Some(name) = pending.pop() else { break };
            running.push((name.clone(), spawn(name, o)?, Instant::now()));
        }
        let (name, child, since) = running.remove(0);
        passed &= finish(&name, child, since, &o.out)?;
    }
    println!(
        "{} target(s) in {:.1}s: {}",
        o.targets.len(),
        started.elapsed().as_secs_f64(),
        if passed {
            "no findings"
        } else {
            "FINDINGS (see above)"
        }
    );
    Ok(passed)
}

fn main() -> ExitCode {
    let o = match options() {
        Ok(o) => o,
        Err(e) => {
            eprintln!("roto-fuzz: {e}");
            return ExitCode::FAILURE;
        }
    };
    if let Some(name) = &o.child {
        return child(name, &o);
    }
    match parent(&o) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("roto-fuzz: {e}");
            ExitCode::FAILURE
        }
    }
}
