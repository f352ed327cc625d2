//! The command line: every flag, its `ROTO_*` variable, and the checks that make a bad
//! combination exit 2 before anything starts.

use std::path::PathBuf;
use std::time::Duration;

use clap::builder::BoolishValueParser;
use clap::{ArgAction, Parser};
use roto_core::store::StoreMode;

use crate::conn::Timeouts;

/// Roto: a local AWS cloud emulator speaking the real AWS wire protocols on one port.
#[derive(Debug, Parser)]
#[command(name = "roto-server", version, about, long_about = None)]
pub struct Cli {
    /// Address to listen on; never all interfaces unless asked (0.0.0.0).
    #[arg(long, env = "ROTO_HOST", default_value = "127.0.0.1")]
    pub host: String,

    /// Port to listen on; 0 picks a free one (printed in the start line).
    #[arg(long, env = "ROTO_PORT", default_value_t = 4566)]
    pub port: u16,

    /// Keep all state in memory; it is gone when the process exits.
    #[arg(long, env = "ROTO_EPHEMERAL", action = ArgAction::SetTrue, value_parser = BoolishValueParser::new())]
    pub ephemeral: bool,

    /// Keep state in SQLite in this directory [default: ./.roto].
    #[arg(long, env = "ROTO_DATA_DIR", value_name = "DIR")]
    pub data_dir: Option<PathBuf>,

    /// Fsync before acknowledging every write (needs a data directory).
    #[arg(long, env = "ROTO_DURABLE", action = ArgAction::SetTrue, value_parser = BoolishValueParser::new())]
    pub durable: bool,

    /// Enforce access as AWS does: identity, resource and session policies, boundaries,
    /// ACLs and Block Public Access decide every request (see docs/security.md).
    #[arg(long, env = "ROTO_ENFORCE_IAM", action = ArgAction::SetTrue, value_parser = BoolishValueParser::new())]
    pub enforce_iam: bool,

    /// Verify request signatures as AWS does (SigV4, S3's SigV2 and presigned URLs) against
    /// the keys IAM and STS issued; every account's root secret is `test`.
    #[arg(long, env = "ROTO_VERIFY_SIGNATURES", action = ArgAction::SetTrue, value_parser = BoolishValueParser::new())]
    pub verify_signatures: bool,

    /// Lua setup script run before the port opens (repeatable, run in order).
    #[arg(
        long = "setup",
        env = "ROTO_SETUP",
        value_name = "FILE",
        value_delimiter = ','
    )]
    pub setup: Vec<PathBuf>,

    /// Shell script run once the port is open, or a directory whose executable files run
    /// in name order, like LocalStack's ready.d (repeatable, run in order). A failing hook
    /// is logged and reported in /_localstack/init; the server keeps running.
    #[arg(
        long = "ready-hook",
        env = "ROTO_READY_HOOK",
        value_name = "PATH",
        value_delimiter = ','
    )]
    pub ready_hook: Vec<PathBuf>,

    /// Print `Ready.` on stdout once the port is open and every --ready-hook has ended, as
    /// LocalStack's container does (log-line wait strategies wait for it; the container
    /// image sets it).
    #[arg(long = "print-ready", env = "ROTO_PRINT_READY", action = ArgAction::SetTrue,
          value_parser = BoolishValueParser::new())]
    pub print_ready: bool,

    /// Account for requests whose access key names none.
    #[arg(long, env = "ROTO_ACCOUNT_ID", default_value = "000000000000")]
    pub account_id: String,

    /// Region for requests whose signature names none.
    #[arg(long, env = "ROTO_REGION", default_value = "us-east-1")]
    pub region: String,

    /// Enforce Kinesis' per-shard throughput limits (1 MiB/s and 1,000 records/s in, 5
    /// reads/s and 2 MiB/s out), answering ProvisionedThroughputExceededException as AWS does.
    #[arg(long, env = "ROTO_KINESIS_SHARD_LIMITS", action = ArgAction::SetTrue, value_parser = BoolishValueParser::new())]
    pub kinesis_shard_limits: bool,

    /// How Lambda functions run: process, docker or none.
    #[arg(long, env = "ROTO_LAMBDA_EXECUTOR", default_value = "process",
          value_parser = ["process", "docker", "none"])]
    pub lambda_executor: String,

    /// The container image a runtime's functions run in under the docker executor,
    /// RUNTIME=IMAGE (repeatable; `python3.12=my-mirror/python:3.12`); an ECR image URI of a
    /// container-image function maps the same way. An image the engine has is used without
    /// contacting a registry.
    #[arg(
        long = "lambda-image",
        env = "ROTO_LAMBDA_IMAGE",
        value_name = "RUNTIME=IMAGE",
        value_delimiter = ',',
        value_parser = runtime_image
    )]
    pub lambda_image: Vec<String>,

    /// The registry prefix that replaces `public.ecr.aws/lambda` in every runtime's image
    /// under the docker executor (`my-mirror.example.com/lambda` gives
    /// `my-mirror.example.com/lambda/python:3.12`).
    #[arg(long, env = "ROTO_LAMBDA_IMAGE_REGISTRY", value_name = "PREFIX")]
    pub lambda_image_registry: Option<String>,

    /// Base domain of virtual-host-style addresses (bucket.s3.localhost).
    #[arg(long, env = "ROTO_DOMAIN", default_value = "localhost")]
    pub domain: String,

    /// A Host name to answer besides IP literals, localhost, the --domain, *.amazonaws.com,
    /// *.localhost.localstack.cloud and host.docker.internal (repeatable; `*.example.com` covers subdomains;
    /// `*` answers any name). Other names are refused as DNS rebinding. Listening on a
    /// non-loopback --host answers any name.
    #[arg(
        long = "allow-host",
        env = "ROTO_ALLOW_HOST",
        value_name = "NAME",
        value_delimiter = ','
    )]
    pub allow_host: Vec<String>,

    /// A browser origin (`http://shop.test:3000`) allowed to reach /_roto/* and to make
    /// unsigned calls and to get CORS answers, besides pages on loopback such as
    /// `http://localhost:3000` (repeatable; `*` allows every origin).
    #[arg(
        long = "allow-origin",
        env = "ROTO_ALLOW_ORIGIN",
        value_name = "ORIGIN",
        value_delimiter = ','
    )]
    pub allow_origin: Vec<String>,

    /// Seconds a client may take to send a request's head (from its first byte).
    #[arg(long, env = "ROTO_HEADER_TIMEOUT", value_name = "SECONDS", default_value_t = 30.0,
          value_parser = seconds)]
    pub header_timeout: f64,

    /// Seconds a request body may go without a byte before the request fails (S3:
    /// 400 RequestTimeout); a slow upload that keeps sending is never cut.
    #[arg(long, env = "ROTO_BODY_TIMEOUT", value_name = "SECONDS", default_value_t = 20.0,
          value_parser = seconds)]
    pub body_timeout: f64,

    /// Seconds a keep-alive connection may stay open with no request and no traffic.
    #[arg(long, env = "ROTO_IDLE_TIMEOUT", value_name = "SECONDS", default_value_t = 60.0,
          value_parser = seconds)]
    pub idle_timeout: f64,

    /// How many requests and deliveries the trace keeps.
    #[arg(long, env = "ROTO_TRACE_LIMIT", default_value_t = 10_000)]
    pub trace_limit: usize,

    /// Log level: error, warn, info, debug or trace.
    #[arg(long, env = "ROTO_LOG_LEVEL", default_value = "warn",
          value_parser = ["off", "error", "warn", "info", "debug", "trace"])]
    pub log_level: String,
}

/// A `--lambda-image` value: `RUNTIME=IMAGE`.
fn runtime_image(value: &str) -> Result<String, String> {
    roto_services::lambda::image_entry(value).map(|_| value.to_string())
}

/// A timeout flag's value: a positive number of seconds, at most a day.
fn seconds(value: &str) -> Result<f64, String> {
    match value.parse::<f64>() {
        Ok(s) if s > 0.0 && s <= 86_400.0 => Ok(s),
        _ => Err(format!(
            "'{value}' is not a number of seconds between 0 and 86400"
        )),
    }
}

impl Cli {
    /// The connection and body timeouts the flags ask for.
    pub fn timeouts(&self) -> Timeouts {
        Timeouts {
            header: Duration::from_secs_f64(self.header_timeout),
            body: Duration::from_secs_f64(self.body_timeout),
            idle: Duration::from_secs_f64(self.idle_timeout),
        }
    }

    /// The store mode the flags ask for, or the message for an invalid combination.
    pub fn store_mode(&self) -> Result<StoreMode, String> {
        match (self.ephemeral, &self.data_dir, self.durable) {
            (true, Some(_), _) => Err("--ephemeral and --data-dir cannot be used together".into()),
            (true, None, true) => {
                Err("--durable needs a data directory; it cannot be used with --ephemeral".into())
            }
            (true, None, false) => Ok(StoreMode::Ephemeral),
            (false, dir, durable) => {
                let dir = dir.clone().unwrap_or_else(|| PathBuf::from(".roto"));
                Ok(if durable {
                    StoreMode::Durable(dir)
                } else {
                    StoreMode::Persistent(dir)
                })
            }
        }
    }

    /// Checks values clap cannot: the account id's form.
    pub fn check(&self) -> Result<(), String> {
        if self.account_id.len() != 12 || !self.account_id.bytes().all(|b| b.is_ascii_digit()) {
            return Err(format!(
                "--account-id must be 12 digits, got '{}'",
                self.account_id
            ));
        }
        if self.region.is_empty() {
            return Err("--region must not be empty".into());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Cli {
        Cli::try_parse_from(std::iter::once("roto-server").chain(args.iter().copied())).unwrap()
    }

    #[test]
    fn store_mode_follows_the_flags() {
        assert_eq!(
            parse(&["--ephemeral"]).store_mode(),
            Ok(StoreMode::Ephemeral)
        );
        assert_eq!(
            parse(&[]).store_mode(),
            Ok(StoreMode::Persistent(PathBuf::from(".roto")))
        );
        assert_eq!(
            parse(&["--data-dir", "d", "--durable"]).store_mode(),
            Ok(StoreMode::Durable(PathBuf::from("d")))
        );
        assert!(parse(&["--ephemeral", "--data-dir", "d"])
            .store_mode()
            .is_err());
        assert!(parse(&["--ephemeral", "--durable"]).store_mode().is_err());
    }

    #[test]
    fn timeouts_take_seconds_and_refuse_nonsense() {
        let cli = parse(&["--header-timeout", "1", "--body-timeout", "0.5"]);
        assert_eq!(cli.timeouts().header, Duration::from_secs(1));
        assert_eq!(cli.timeouts().body, Duration::from_millis(500));
        assert_eq!(cli.timeouts().idle, Duration::from_secs(60));
        for bad in ["0", "-1", "soon"] {
            let args = ["roto-server", "--idle-timeout", bad];
            assert!(Cli::try_parse_from(args).is_err(), "{bad}");
        }
    }

    #[test]
    fn allowed_hosts_and_origins_repeat_and_split_on_commas() {
        let cli = parse(&["--allow-host", "a.test,b.test", "--allow-host", "c.test"]);
        assert_eq!(cli.allow_host, ["a.test", "b.test", "c.test"]);
        let cli = parse(&["--allow-origin", "http://localhost:3000"]);
        assert_eq!(cli.allow_origin, ["http://localhost:3000"]);
    }

    #[test]
    fn account_ids_must_be_twelve_digits() {
        assert!(parse(&["--account-id", "123"]).check().is_err());
        assert!(parse(&["--account-id", "123456789012"]).check().is_ok());
    }
}
