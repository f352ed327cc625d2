//! SSM Parameter Store over the json 1.1 protocol.
//!
//! Every version of a parameter is a row of `ssm_versions` holding the whole parameter as
//! it was written (type, value, description, pattern, tier, labels), so history and
//! `name:version` / `name:label` selectors read one row; `ssm_parameters` holds the latest
//! version number and the tags. SecureString values are encrypted through KMS by envelope
//! encryption (see [`crate::envelope`]) under the parameter's `KeyId` or the account's
//! `alias/aws/ssm` key, with the parameter's ARN as encryption context, as AWS does.
//!
//! - [`names`]: name, hierarchy, selector and label rules.
//! - [`parameters`]: put, get, delete, history, labels, tags.
//! - [`queries`]: GetParametersByPath and DescribeParameters with their filters.

use std::io;
use std::sync::Arc;

use roto_core::featureless::{self, Featureless};
use roto_core::{AwsResult, BoxFuture, Context, Env, Request, Response, Service, ServiceSpec};

mod names;
mod parameters;
mod queries;
mod unmodeled;

static SPEC: ServiceSpec = ServiceSpec {
    name: "ssm",
    model: "ssm",
    query_model: None,
    signing_names: &["ssm"],
    target_prefix: Some("AmazonSSM"),
    query_version: None,
    crc32_responses: false,
    validate_input: true,
};

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS ssm_parameters (
    account TEXT NOT NULL,
    region TEXT NOT NULL,
    name TEXT NOT NULL,
    version INTEGER NOT NULL,
    tags TEXT NOT NULL DEFAULT '[]',
    PRIMARY KEY (account, region, name)
);
CREATE TABLE IF NOT EXISTS ssm_versions (
    account TEXT NOT NULL,
    region TEXT NOT NULL,
    name TEXT NOT NULL,
    version INTEGER NOT NULL,
    type TEXT NOT NULL,
    value BLOB NOT NULL,
    key_id TEXT,
    description TEXT,
    allowed_pattern TEXT,
    tier TEXT NOT NULL,
    data_type TEXT NOT NULL,
    policies TEXT,
    modified INTEGER NOT NULL,
    labels TEXT NOT NULL DEFAULT '[]',
    PRIMARY KEY (account, region, name, version)
);
";

/// The KMS alias of the key that protects SecureString parameters that name none.
const DEFAULT_KEY: &str = "alias/aws/ssm";

/// SSM Parameter Store.
pub struct Ssm {
    env: Arc<Env>,
}

impl Ssm {
    /// Creates the service's tables.
    pub fn new(env: Arc<Env>) -> io::Result<Ssm> {
        env.store.migrate(SCHEMA)?;
        Ok(Ssm { env })
    }
}

impl Service for Ssm {
    fn spec(&self) -> &'static ServiceSpec {
        &SPEC
    }

    fn featureless(&self) -> &'static [Featureless] {
        unmodeled::FEATURELESS
    }

    fn call<'a>(
        &'a self,
        ctx: &'a Context,
        operation: &'a str,
        request: Request,
    ) -> BoxFuture<'a, AwsResult<Response>> {
        Box::pin(async move {
            let input = &request.input;
            let output = match operation {
                "PutParameter" => self.put_parameter(ctx, input).await?,
                "GetParameter" => self.get_parameter(ctx, input).await?,
                "GetParameters" => self.get_parameters(ctx, input).await?,
                "GetParametersByPath" => self.get_parameters_by_path(ctx, input).await?,
                "DescribeParameters" => self.describe_parameters(ctx, input)?,
                "GetParameterHistory" => self.get_parameter_history(ctx, input).await?,
                "LabelParameterVersion" => self.label_parameter_version(ctx, input)?,
                "UnlabelParameterVersion" => self.unlabel_parameter_version(ctx, input)?,
                "DeleteParameter" => self.delete_parameter(ctx, input)?,
                "DeleteParameters" => self.delete_parameters(ctx, input)?,
                "AddTagsToResource" => self.add_tags_to_resource(ctx, input)?,
                "RemoveTagsFromResource" => self.remove_tags_from_resource(ctx, input)?,
                "ListTagsForResource" => self.list_tags_for_resource(ctx, input)?,
                other => {
                    return featureless::answer(SPEC.model(), unmodeled::FEATURELESS, other, input)
                        .map(Response::new)
                }
            };
            Ok(Response::new(output))
        })
    }
}
