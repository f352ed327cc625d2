//! SNS's side of `--enforce-iam`: a call's topic (its `TopicArn`, or the topic `Name`
//! creates), the topic's policy and its tags.

use roto_core::access::{self, Access, ResourcePolicy};
use roto_core::{AwsError, AwsResult, Context, Value};

use super::{store, Sns};

impl Sns {
    /// What an SNS call asks.
    pub(super) fn access_of(&self, ctx: &Context, op: &str, input: &Value) -> AwsResult<Access> {
        let mut out = access::generic(&super::SPEC, op, input);
        let Some(arn) = input.str("TopicArn") else {
            if let (Some(name), "CreateTopic") = (input.str("Name"), op) {
                out.resource = access::arn(ctx, "sns", name);
            }
            return Ok(out);
        };
        let topic = self
            .env
            .store
            .with(|c| store::find_topic(c, arn).map_err(AwsError::from))?;
        if let Some(topic) = &topic {
            out.resource_tags = topic.tags.clone().into_iter().collect();
        }
        out.policy = Some(ResourcePolicy {
            document: topic
                .as_ref()
                .and_then(|t| t.attributes.get("Policy").cloned()),
            owner: arn.split(':').nth(4).unwrap_or_default().to_string(),
            ..ResourcePolicy::default()
        });
        Ok(out)
    }
}
