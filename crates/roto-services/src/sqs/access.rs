//! SQS's side of `--enforce-iam`: a call's queue ARN (from `QueueUrl`, or `QueueName` for
//! `CreateQueue` and `GetQueueUrl`), the queue's policy and its tags.

use roto_core::access::{self, Access, ResourcePolicy};
use roto_core::{AwsError, AwsResult, Context, Value};

use super::queues::parse_queue_url;
use super::{store, Sqs};

impl Sqs {
    /// What an SQS call asks.
    pub(super) fn access_of(&self, ctx: &Context, op: &str, input: &Value) -> AwsResult<Access> {
        let mut out = access::generic(&super::SPEC, op, input);
        let Some(url) = input.str("QueueUrl") else {
            if let Some(name) = input.str("QueueName") {
                out.resource = access::arn(ctx, "sqs", name);
            }
            return Ok(out);
        };
        let Some(address) = parse_queue_url(url, ctx) else {
            return Ok(out);
        };
        out.resource = format!(
            "arn:aws:sqs:{}:{}:{}",
            address.region, address.account, address.name
        );
        let (queue, tags) = self.env.store.with(|c| {
            let queue = store::find_queue(c, &address.account, &address.region, &address.name)?;
            let tags = match &queue {
                Some(q) => store::queue_tags(c, q.id)?,
                None => Default::default(),
            };
            Ok::<_, AwsError>((queue, tags))
        })?;
        out.resource_tags = tags.into_iter().collect();
        out.policy = Some(ResourcePolicy {
            document: queue.and_then(|q| q.attributes.get("Policy").cloned()),
            owner: address.account,
            ..ResourcePolicy::default()
        });
        Ok(out)
    }
}
