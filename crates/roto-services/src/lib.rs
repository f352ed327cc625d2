//! roto-services: Roto's AWS services, one module each.
//!
//! Every module has the shape Moto users know: the service (its [`Service`] impl and the
//! operation dispatch), its state model in the store, and its errors; the wire format is
//! never here, since roto-core's codecs produce and consume shaped values. A service reads
//! only its own tables; effects on other services go through the event bus, synchronous
//! needs through the dispatcher.

use std::io;
use std::sync::Arc;

use roto_core::{Env, Service};

pub mod apigateway;
mod balance;
mod blocking;
mod clock_task;
pub mod cloudformation;
pub mod cloudwatch;
mod cron;
mod default_bus;
mod documents;
pub mod dynamodb;
pub mod ecr;
mod envelope;
pub mod events;
pub mod firehose;
mod glob;
pub mod gzip;
mod http_client;
pub mod iam;
mod ids;
pub mod kinesis;
pub mod kms;
pub mod lambda;
pub mod logs;
mod media;
mod paging;
pub mod pattern;
pub mod s3;
pub mod scheduler;
mod sdk;
pub mod secretsmanager;
pub mod sns;
pub mod sqs;
pub mod ssm;
pub mod stepfunctions;
pub mod sts;
mod tags;

/// Every service, constructed over the shared environment (creating their tables).
pub fn all(env: &Arc<Env>) -> io::Result<Vec<Arc<dyn Service>>> {
    let apigateway = Arc::new(apigateway::ApiGateway::new(env.clone())?);
    let http_apis = apigateway.http_apis();
    Ok(vec![
        Arc::new(s3::S3::new(env.clone())?),
        Arc::new(dynamodb::DynamoDb::new(env.clone())?),
        Arc::new(dynamodb::DynamoDbStreams::new(env.clone())?),
        Arc::new(sqs::Sqs::new(env.clone())?),
        Arc::new(sns::Sns::new(env.clone())?),
        Arc::new(sts::Sts::new(env.clone())?),
        Arc::new(logs::Logs::new(env.clone())?),
        Arc::new(iam::Iam::new(env.clone())?),
        Arc::new(kms::Kms::new(env.clone())?),
        Arc::new(kinesis::Kinesis::new(env.clone())),
        Arc::new(firehose::Firehose::new(env.clone())),
        Arc::new(cloudwatch::CloudWatch::new(env.clone())?),
        Arc::new(secretsmanager::SecretsManager::new(env.clone())?),
        Arc::new(lambda::Lambda::new(env.clone())?),
        Arc::new(ssm::Ssm::new(env.clone())?),
        Arc::new(events::EventBridge::new(env.clone())?),
        apigateway,
        http_apis,
        Arc::new(stepfunctions::StepFunctions::new(env.clone())?),
        Arc::new(scheduler::Scheduler::new(env.clone())?),
        Arc::new(cloudformation::CloudFormation::new(env.clone())),
        Arc::new(ecr::Ecr::new(env.clone())),
    ])
}
