//! roto-testing against the real binary: start, readiness, setup, traces, reset, drop.
//!
//! The binary is found the way users' tests find it ([`roto_testing::binary`]); when none
//! has been built yet (a plain `cargo test --workspace` on a fresh checkout), it is built
//! once with the same cargo that runs these tests.

use std::path::PathBuf;
use std::process::Command;
use std::sync::OnceLock;
use std::time::Duration;

use roto_testing::{Error, Roto};

const IDENTITY: &[u8] = b"Action=GetCallerIdentity&Version=2011-06-15";

fn binary() -> PathBuf {
    static BINARY: OnceLock<PathBuf> = OnceLock::new();
    BINARY
        .get_or_init(|| {
            roto_testing::binary().unwrap_or_else(|_| {
                let workspace = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
                let status = Command::new(env!("CARGO"))
                    .args(["build", "-p", "roto-server"])
                    .current_dir(&workspace)
                    .status()
                    .expect("run cargo build");
                assert!(status.success(), "cargo build -p roto-server failed");
                roto_testing::binary().expect("roto-server after building it")
            })
        })
        .clone()
}

fn start() -> Roto {
    Roto::builder()
        .binary(binary())
        .start()
        .expect("server starts")
}

#[test]
fn a_started_server_answers_at_its_endpoint() {
    let roto = start();
    assert!(roto.endpoint().starts_with("http://127.0.0.1:"));
    assert_ne!(roto.port(), 0);
    let (status, body) = roto.request("POST", "/", IDENTITY).expect("request");
    assert_eq!(status, 200);
    assert!(String::from_utf8_lossy(&body).contains("<Account>000000000000</Account>"));
}

#[test]
fn traces_record_requests_and_reset_empties_them() {
    let roto = start();
    roto.request("POST", "/", IDENTITY).expect("request");
    let entries = roto
        .traces(&[("service", "sts"), ("operation", "GetCallerIdentity")])
        .expect("traces");
    assert!(!entries.is_empty());
    assert_eq!(entries[0]["service"], "sts");
    roto.reset().expect("reset");
    let entries = roto.traces(&[("service", "sts")]).expect("traces");
    assert!(entries.is_empty(), "{entries:?}");
}

#[test]
fn wait_for_trace_returns_empty_when_nothing_matches_in_time() {
    let roto = start();
    let entries = roto
        .wait_for_trace(&[("service", "sqs")], Duration::from_millis(100))
        .expect("traces");
    assert!(entries.is_empty());
}

#[test]
fn a_setup_script_seeds_the_server_before_it_is_ready() {
    let dir = tempfile::tempdir().expect("tempdir");
    let script = dir.path().join("setup.lua");
    std::fs::write(&script, r#"aws.sqs.CreateQueue{QueueName = "seeded"}"#).expect("write");
    let roto = Roto::builder()
        .binary(binary())
        .setup(&script)
        .start()
        .expect("start");
    let entries = roto
        .traces(&[("service", "sqs"), ("operation", "CreateQueue")])
        .expect("traces");
    assert_eq!(entries.len(), 1);
    assert_eq!(entries[0]["source"], "dispatcher");
}

#[test]
fn a_failing_setup_script_is_a_start_error_carrying_stderr() {
    let dir = tempfile::tempdir().expect("tempdir");
    let script = dir.path().join("broken.lua");
    std::fs::write(&script, "aws.sqs.GetQueueUrl{QueueName = \"missing\"}\n").expect("write");
    match Roto::builder().binary(binary()).setup(&script).start() {
        Err(Error::Start(message)) => {
            assert!(message.contains("broken.lua:1:"), "{message}");
            assert!(message.contains("QueueDoesNotExist"), "{message}");
        }
        Err(other) => panic!("unexpected error {other}"),
        Ok(_) => panic!("a failing setup script started a server"),
    }
}

#[test]
fn dropping_the_fixture_stops_the_server() {
    let roto = start();
    let port = roto.port();
    drop(roto);
    assert!(std::net::TcpStream::connect(("127.0.0.1", port)).is_err());
}

#[test]
fn a_missing_binary_is_reported_by_name() {
    match Roto::builder().binary("/nonexistent/roto-server").start() {
        Err(Error::Start(message)) => {
            assert!(message.contains("/nonexistent/roto-server"), "{message}")
        }
        Err(other) => panic!("unexpected error {other}"),
        Ok(_) => panic!("started a missing binary"),
    }
}
