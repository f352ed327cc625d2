//! The command line: every flag, its `ROTO_*` variable, and the checks that make a bad
//! combination exit 2 before anything starts.

use std::path::PathBuf;

use clap::builder::BoolishValueParser;
use clap::{ArgAction, Parser};
use roto_core::store::StoreMode;

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

    /// Lua setup script run before the port opens (repeatable, run in order).
    #[arg(
        long = "setup",
        env = "ROTO_SETUP",
        value_name = "FILE",
        value_delimiter = ','
    )]
    pub setup: Vec<PathBuf>,

    /// Account for requests whose access key names none.
    #[arg(long, env = "ROTO_ACCOUNT_ID", default_value = "000000000000")]
    pub account_id: String,

    /// Region for requests whose signature names none.
    #[arg(long, env = "ROTO_REGION", default_value = "us-east-1")]
    pub region: String,

    /// How Lambda functions run: process, docker or none.
    #[arg(long, env = "ROTO_LAMBDA_EXECUTOR", default_value = "process",
          value_parser = ["process", "docker", "none"])]
    pub lambda_executor: String,

    /// Base domain of virtual-host-style addresses (bucket.s3.localhost).
    #[arg(long, env = "ROTO_DOMAIN", default_value = "localhost")]
    pub domain: String,

    /// How many requests and deliveries the trace keeps.
    #[arg(long, env = "ROTO_TRACE_LIMIT", default_value_t = 10_000)]
    pub trace_limit: usize,

    /// Log level: error, warn, info, debug or trace.
    #[arg(long, env = "ROTO_LOG_LEVEL", default_value = "warn",
          value_parser = ["off", "error", "warn", "info", "debug", "trace"])]
    pub log_level: String,
}

impl Cli {
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
    fn account_ids_must_be_twelve_digits() {
        assert!(parse(&["--account-id", "123"]).check().is_err());
        assert!(parse(&["--account-id", "123456789012"]).check().is_ok());
    }
}
