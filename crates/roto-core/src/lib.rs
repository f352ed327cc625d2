//! roto-core: what every Roto service shares.
//!
//! - [`model`]: the embedded AWS service models, parsed lazily.
//! - [`protocol`]: one generic codec per wire protocol, driven by those models.
//! - [`value`] and [`error`]: the shaped values handlers take and return, and the one AWS
//!   error type.
//! - [`store`]: SQLite and blob files, in memory or on disk.
//! - [`events`] and [`trace`]: asynchronous deliveries between services, and the record of
//!   every request and delivery.
//! - [`dispatch`]: the [`dispatch::Service`] trait and the in-process dispatcher.
//! - [`access`]: principals, actions, resources and verdicts, for `--enforce-iam`.
//! - [`metrics`]: the metrics services publish about themselves, waiting for CloudWatch.
//! - [`featureless`]: how services answer operations of features Roto does not model.
//!
//! This crate knows no service: it must never name S3, DynamoDB or any other.

pub mod access;
pub mod dispatch;
pub mod error;
pub mod events;
pub mod eventstream;
pub mod featureless;
pub mod identity;
pub mod memory;
pub mod metrics;
pub mod model;
pub mod presign;
pub mod protocol;
pub mod signature;
pub mod store;
pub mod timestamp;
pub mod trace;
pub mod validate;
pub mod value;

pub use dispatch::{BoxFuture, Context, Dispatcher, Env, Request, Response, Service, ServiceSpec};
pub use error::{AwsError, AwsResult};
pub use value::Value;
