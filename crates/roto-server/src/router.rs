//! Routing: which service a request is for, and which account and region it acts in.
//!
//! The order follows what real clients send: `X-Amz-Target` first (DynamoDB Streams signs
//! with the `dynamodb` scope, so the scope alone would misroute it), then the SigV4
//! credential scope (`Authorization`, or a presigned URL's `X-Amz-Credential`), then the
//! query protocol's `Version`, then the host (`sqs.us-east-1.localhost`,
//! `bucket.s3.localhost`) and the path (`/000000000000/queue`); anything left is S3 in
//! path style, as LocalStack does. The access key id picks the account; the scope's region
//! picks the region. A data plane's host comes before all of these: whatever its request
//! says, a Lambda function URL's (`<id>.lambda-url.<region>.localhost`) is for the function,
//! and an API Gateway API's (`<id>.execute-api.<region>.amazonaws.com`, or the path
//! `/_aws/execute-api/<id>/...`) for the API ([`DATA_PLANES`]).

use std::borrow::Cow;
use std::sync::Arc;

use http::request::Parts;
use roto_core::identity::account_of_access_key;
use roto_core::Service;

/// Where a request goes.
pub struct Route {
    /// The service.
    pub service: Arc<dyn Service>,
    /// The account it acts in.
    pub account: String,
    /// The region it acts in.
    pub region: String,
    /// The access key id it was signed with.
    pub access_key: Option<String>,
    /// The bucket named by a virtual-host-style address (`bucket.s3.localhost`).
    pub virtual_bucket: Option<String>,
    /// The operation a request no model describes goes to (`InvokeFunctionUrl` for a
    /// function URL), with its method, path, query, headers and body as they came.
    pub raw_operation: Option<&'static str>,
}

/// A data plane served on Roto's port: requests for hosts `<id>.<label>[.<region>].<base>`
/// (or whose path starts with `path_prefix`) go to the service's raw operation.
#[derive(Debug, PartialEq)]
pub struct DataPlane {
    /// The host label after the id (`lambda-url`).
    pub label: &'static str,
    /// The path prefix that also reaches it, for clients that cannot set a host name.
    pub path_prefix: Option<&'static str>,
    /// The service that serves it.
    pub service: &'static str,
    /// The raw operation that receives its requests.
    pub operation: &'static str,
}

/// Lambda function URLs, API Gateway's deployed APIs (REST and HTTP alike), and the
/// layer downloads ECR's GetDownloadUrlForLayer points at.
pub const DATA_PLANES: &[DataPlane] = &[
    DataPlane {
        label: "lambda-url",
        path_prefix: None,
        service: "lambda",
        operation: "InvokeFunctionUrl",
    },
    DataPlane {
        label: "execute-api",
        path_prefix: Some("/_aws/execute-api/"),
        service: "apigateway",
        operation: "ExecuteApi",
    },
    DataPlane {
        label: "ecr-layer",
        path_prefix: Some("/_aws/ecr/"),
        service: "ecr",
        operation: "GetLayerBlob",
    },
];

/// What a request's headers and URL say about its caller, borrowed from the request
/// where it can be (a presigned URL's percent-decoded scope is owned).
#[derive(Debug, Default, PartialEq)]
pub struct Credential<'a> {
    /// The access key id.
    pub access_key: Option<Cow<'a, str>>,
    /// The scope's region.
    pub region: Option<Cow<'a, str>>,
    /// The scope's signing name.
    pub service: Option<Cow<'a, str>>,
}

/// Parses the credential from `Authorization` (SigV4, SigV4a, SigV2) or a presigned URL.
pub fn credential(parts: &Parts) -> Credential<'_> {
    let auth = parts
        .headers
        .get(http::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    if let Some(scope) = auth
        .split_once("Credential=")
        .map(|(_, rest)| rest.split([',', ' ']).next().unwrap_or_default())
    {
        let [access_key, region, service] =
            scope_credential(scope, auth.starts_with("AWS4-ECDSA")).map(|p| p.map(Cow::Borrowed));
        return Credential {
            access_key,
            region,
            service,
        };
    }
    if let Some(v2) = auth.strip_prefix("AWS ") {
        return Credential {
            access_key: v2.split(':').next().map(Cow::Borrowed),
            ..Credential::default()
        };
    }
    let query = parts.uri.query().unwrap_or_default();
    for (k, v) in form_urlencoded::parse(query.as_bytes()) {
        match k.as_ref() {
            "X-Amz-Credential" => {
                let algorithm_v4a = query.contains("X-Amz-Algorithm=AWS4-ECDSA");
                let [access_key, region, service] = scope_credential(&v, algorithm_v4a)
                    .map(|p| p.map(|p| Cow::Owned(p.to_string())));
                return Credential {
                    access_key,
                    region,
                    service,
                };
            }
            "AWSAccessKeyId" => {
                return Credential {
                    access_key: Some(Cow::Owned(v.into_owned())),
                    ..Credential::default()
                }
            }
            _ => {}
        }
    }
    Credential::default()
}

/// The access key, region and signing name of `AKID/20260101/us-east-1/s3/aws4_request`
/// (SigV4) or `AKID/20260101/s3/aws4_request` (SigV4a, whose region set is elsewhere).
fn scope_credential(scope: &str, sigv4a: bool) -> [Option<&str>; 3] {
    let mut parts = scope.split('/').map(|s| Some(s).filter(|s| !s.is_empty()));
    let access_key = parts.next().flatten();
    let mut rest = parts.skip(1);
    let region = match sigv4a {
        true => None,
        false => rest.next().flatten(),
    };
    [access_key, region, rest.next().flatten()]
}

/// The routing table over the registered services.
pub struct Router {
    services: Vec<Arc<dyn Service>>,
    default_account: String,
    default_region: String,
    domain: String,
}

/// What the host name says: a service (and region), or a virtual-hosted bucket.
#[derive(Debug, PartialEq)]
enum HostRoute {
    Service {
        name: String,
        region: Option<String>,
    },
    Bucket {
        name: String,
        region: Option<String>,
    },
    DataPlane {
        plane: &'static DataPlane,
        region: Option<String>,
    },
}

impl HostRoute {
    fn region(self) -> Option<String> {
        match self {
            HostRoute::Service { region, .. }
            | HostRoute::Bucket { region, .. }
            | HostRoute::DataPlane { region, .. } => region,
        }
    }
}

fn is_region(label: &str) -> bool {
    let parts: Vec<&str> = label.split('-').collect();
    parts.len() >= 3
        && parts
            .iter()
            .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_alphanumeric()))
        && parts
            .last()
            .is_some_and(|p| p.bytes().all(|b| b.is_ascii_digit()))
}

/// Whether a host label names S3, and the region it names: `s3` (none), the legacy
/// `s3-<region>` and `s3-external-1` (us-east-1).
fn s3_label(label: &str) -> Option<Option<String>> {
    match label {
        "s3" => Some(None),
        "s3-external-1" => Some(Some("us-east-1".into())),
        _ => label
            .strip_prefix("s3-")
            .filter(|region| is_region(region))
            .map(|region| Some(region.to_string())),
    }
}

impl Router {
    /// A router over the services, with the defaults for unsigned callers.
    pub fn new(
        services: Vec<Arc<dyn Service>>,
        default_account: String,
        default_region: String,
        domain: String,
    ) -> Router {
        Router {
            services,
            default_account,
            default_region,
            domain,
        }
    }

    fn by_name(&self, name: &str) -> Option<&Arc<dyn Service>> {
        self.services.iter().find(|s| s.spec().name == name)
    }

    fn by_signing_name(&self, name: &str) -> Option<&Arc<dyn Service>> {
        self.services
            .iter()
            .find(|s| s.spec().signing_names.contains(&name))
    }

    fn by_target(&self, target: &str) -> Option<&Arc<dyn Service>> {
        let prefix = target.split('.').next().unwrap_or_default();
        self.services
            .iter()
            .find(|s| s.spec().target_prefix == Some(prefix))
    }

    /// The service whose query protocol has this `Version`.
    pub fn by_query_version(&self, version: &str) -> Option<&Arc<dyn Service>> {
        self.services
            .iter()
            .find(|s| s.spec().query_version == Some(version))
    }

    /// Reads a host name: `sqs.eu-west-1.localhost`, `sqs.localhost`,
    /// `sqs.us-east-1.amazonaws.com`, `bucket.s3.localhost`, `bucket.s3.eu-west-1.localhost`,
    /// the legacy `bucket.s3-eu-west-1.amazonaws.com`, `bucket.s3.dualstack.eu-west-1...`,
    /// any of these under `localhost.localstack.cloud`, or `bucket.localhost`.
    fn host_route(&self, host: &str) -> Option<HostRoute> {
        let host = host.rsplit_once(':').map_or(host, |(h, port)| {
            if port.bytes().all(|b| b.is_ascii_digit()) {
                h
            } else {
                host
            }
        });
        let host = host.to_ascii_lowercase();
        let stem = self.host_stem(&host)?;
        let labels: Vec<&str> = stem.split('.').collect();
        if let [_, label, rest @ ..] = labels.as_slice() {
            if let Some(plane) = DATA_PLANES.iter().find(|p| p.label == *label) {
                return Some(HostRoute::DataPlane {
                    plane,
                    region: rest.first().filter(|r| is_region(r)).map(|r| r.to_string()),
                });
            }
        }
        if let Some(i) = labels.iter().rposition(|l| s3_label(l).is_some()) {
            let region = s3_label(labels[i]).flatten().or_else(|| {
                let next = labels[i + 1..].iter().find(|l| **l != "dualstack");
                next.filter(|r| is_region(r)).map(|r| r.to_string())
            });
            return Some(match i {
                0 => HostRoute::Service {
                    name: "s3".into(),
                    region,
                },
                _ => HostRoute::Bucket {
                    name: labels[..i].join("."),
                    region,
                },
            });
        }
        let first = labels[0];
        let region = labels
            .get(1)
            .filter(|r| is_region(r))
            .map(|r| r.to_string());
        if self.by_name(first).is_some() || self.by_signing_name(first).is_some() {
            return Some(HostRoute::Service {
                name: first.to_string(),
                region,
            });
        }
        Some(HostRoute::Bucket {
            name: stem.to_string(),
            region: None,
        })
    }

    /// What a host name says before its base: `bucket.s3` of `bucket.s3.localhost`. The
    /// bases are the `--domain`, AWS's own (`amazonaws.com`) and LocalStack's
    /// (`localhost.localstack.cloud`), whatever the `--domain`; the longest that matches.
    fn host_stem<'h>(&self, host: &'h str) -> Option<&'h str> {
        [
            self.domain.as_str(),
            "amazonaws.com",
            "localhost.localstack.cloud",
        ]
        .iter()
        .filter_map(|base| host.strip_suffix(base)?.strip_suffix('.'))
        .filter(|stem| !stem.is_empty())
        .min_by_key(|stem| stem.len())
    }

    /// Routes by headers and URL alone; `None` means the caller should read the body for
    /// a query-protocol `Version` before falling back to [`Router::fallback`].
    pub fn route(&self, parts: &Parts) -> Option<Route> {
        let cred = credential(parts);
        let host = host_str(parts);
        if let Some((plane, region)) = self.data_plane(parts, host) {
            let mut route = self.finish(self.by_name(plane.service)?.clone(), &cred, region, None);
            route.raw_operation = Some(plane.operation);
            return Some(route);
        }
        let target = parts
            .headers
            .get("x-amz-target")
            .and_then(|v| v.to_str().ok());
        let mut virtual_bucket = None;
        let mut host_region = None;
        let service = if let Some(s) = target.and_then(|t| self.by_target(t)) {
            Some(s.clone())
        } else if let Some(s) = cred
            .service
            .as_deref()
            .and_then(|n| self.by_signing_name(n))
        {
            if s.spec().name == "s3" {
                virtual_bucket = self.virtual_bucket(parts);
            }
            Some(s.clone())
        } else if let Some(s) = self.query_version_in_url(parts) {
            Some(s)
        } else {
            match self.host_route(host) {
                Some(HostRoute::Service { name, region }) => {
                    host_region = region;
                    self.by_name(&name)
                        .or_else(|| self.by_signing_name(&name))
                        .cloned()
                }
                Some(HostRoute::Bucket { name, region }) => {
                    host_region = region;
                    virtual_bucket = Some(name);
                    self.by_name("s3").cloned()
                }
                Some(HostRoute::DataPlane { .. }) | None => self.by_queue_path(parts),
            }
        };
        let service = match service.map(|s| self.api_gateway_model(s, parts)) {
            Some(service) => service,
            None if body_may_hold_query_call(parts) => return None,
            None => self.by_name("s3")?.clone(),
        };
        // The scope's region wins; the host's is read only for a request without one.
        let host_region = match cred.region {
            Some(_) => None,
            None => host_region.or_else(|| self.host_route(host)?.region()),
        };
        Some(self.finish(service, &cred, host_region, virtual_bucket))
    }

    /// The data plane a request is for, by its path prefix or its host, and the region
    /// its host names.
    fn data_plane(
        &self,
        parts: &Parts,
        host: &str,
    ) -> Option<(&'static DataPlane, Option<String>)> {
        let path = parts.uri.path();
        if let Some(plane) = DATA_PLANES
            .iter()
            .find(|p| p.path_prefix.is_some_and(|prefix| path.starts_with(prefix)))
        {
            return Some((plane, None));
        }
        let named = DATA_PLANES.iter().any(|p| has_inner_label(host, p.label));
        match self.host_route(host).filter(|_| named)? {
            HostRoute::DataPlane { plane, region } => Some((plane, region)),
            _ => None,
        }
    }

    /// API Gateway's two models, REST APIs (`apigateway`) and HTTP APIs (`apigatewayv2`),
    /// share a signing name and a host; HTTP APIs' operations are those under `/v2/`.
    fn api_gateway_model(&self, service: Arc<dyn Service>, parts: &Parts) -> Arc<dyn Service> {
        if !matches!(service.spec().name, "apigateway" | "apigatewayv2") {
            return service;
        }
        let name = if parts.uri.path().starts_with("/v2/") {
            "apigatewayv2"
        } else {
            "apigateway"
        };
        self.by_name(name).cloned().unwrap_or(service)
    }

    fn finish(
        &self,
        service: Arc<dyn Service>,
        cred: &Credential,
        host_region: Option<String>,
        virtual_bucket: Option<String>,
    ) -> Route {
        let account = cred
            .access_key
            .as_deref()
            .and_then(account_of_access_key)
            .unwrap_or_else(|| self.default_account.clone());
        let region = cred
            .region
            .as_deref()
            .map(str::to_string)
            .or(host_region)
            .unwrap_or_else(|| self.default_region.clone());
        Route {
            service,
            account,
            region,
            access_key: cred.access_key.as_deref().map(str::to_string),
            virtual_bucket,
            raw_operation: None,
        }
    }

    /// Routes a request the headers could not place: by the query protocol's `Version` in
    /// its form body, else to S3 in path style.
    /// A form signed with SigV2 names its key in the body (`form_key`), which then chooses
    /// the account.
    pub fn fallback(
        &self,
        parts: &Parts,
        version: Option<&str>,
        form_key: Option<&str>,
    ) -> Option<Route> {
        let service = version
            .and_then(|v| self.by_query_version(v))
            .cloned()
            .or_else(|| self.by_name("s3").cloned())?;
        let mut cred = credential(parts);
        if cred.access_key.is_none() {
            cred.access_key = form_key.map(Cow::Borrowed);
        }
        Some(self.finish(service, &cred, None, None))
    }

    fn query_version_in_url(&self, parts: &Parts) -> Option<Arc<dyn Service>> {
        let query = parts.uri.query()?;
        let mut action = false;
        let mut version = None;
        for (k, v) in form_urlencoded::parse(query.as_bytes()) {
            match k.as_ref() {
                "Action" => action = true,
                "Version" => version = Some(v.into_owned()),
                _ => {}
            }
        }
        if !action {
            return None;
        }
        version.and_then(|v| self.by_query_version(&v).cloned())
    }

    /// SQS queue URLs (`/000000000000/name`) reach SQS even unsigned.
    fn by_queue_path(&self, parts: &Parts) -> Option<Arc<dyn Service>> {
        let mut segments = parts.uri.path().trim_start_matches('/').split('/');
        let account = segments.next()?;
        let is_account = account.len() == 12 && account.bytes().all(|b| b.is_ascii_digit());
        (is_account && segments.next().is_some_and(|q| !q.is_empty()) && segments.next().is_none())
            .then(|| self.by_name("sqs").cloned())
            .flatten()
    }

    fn virtual_bucket(&self, parts: &Parts) -> Option<String> {
        match self.host_route(host_str(parts))? {
            HostRoute::Bucket { name, .. } => Some(name),
            HostRoute::Service { .. } | HostRoute::DataPlane { .. } => None,
        }
    }
}

/// Whether a request the headers and URL could not place may still be a query-protocol
/// call whose form body names its service: a `POST` of a form (or of an untyped body) that
/// is not an S3 SigV2 presigned URL. Every other such request is S3's in path style, and
/// routing it so leaves its body unread for S3 to stream.
fn body_may_hold_query_call(parts: &Parts) -> bool {
    let form = parts
        .headers
        .get(http::header::CONTENT_TYPE)
        .map(|v| v.to_str().unwrap_or_default())
        .is_none_or(|ct| ct.starts_with("application/x-www-form-urlencoded"));
    let query = parts.uri.query().unwrap_or_default();
    let presigned_v2 = form_urlencoded::parse(query.as_bytes())
        .any(|(k, _)| k == "AWSAccessKeyId" || k == "Signature");
    parts.method == http::Method::POST && form && !presigned_v2
}

/// The `Host` header, or the URI's authority.
pub fn host_of(parts: &Parts) -> String {
    host_str(parts).to_string()
}

fn host_str(parts: &Parts) -> &str {
    parts
        .headers
        .get(http::header::HOST)
        .and_then(|v| v.to_str().ok())
        .or_else(|| parts.uri.authority().map(|a| a.as_str()))
        .unwrap_or_default()
}

/// Whether `label` is one of the host's labels other than its first and last (the
/// `lambda-url` of `<id>.lambda-url.<region>.localhost`).
fn has_inner_label(host: &str, label: &str) -> bool {
    host.match_indices(label)
        .any(|(at, _)| host[..at].ends_with('.') && host[at + label.len()..].starts_with('.'))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use roto_core::store::{Store, StoreMode};
    use roto_core::Env;

    /// An in-memory environment with the defaults the unit tests assume.
    pub(crate) fn env() -> Arc<Env> {
        Arc::new(Env::new(
            Store::open(StoreMode::Ephemeral).unwrap(),
            10,
            "000000000000".into(),
            "us-east-1".into(),
            "localhost".into(),
        ))
    }

    fn router() -> Router {
        let services = roto_services::all(&env()).unwrap();
        Router::new(
            services,
            "000000000000".into(),
            "us-east-1".into(),
            "localhost".into(),
        )
    }

    fn parts(uri: &str, headers: &[(&str, &str)]) -> Parts {
        let mut b = http::Request::builder().uri(uri);
        for (k, v) in headers {
            b = b.header(*k, *v);
        }
        b.body(()).unwrap().into_parts().0
    }

    const SIGNED_S3: &str = "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20260101/eu-west-1/s3/aws4_request, SignedHeaders=host, Signature=00";

    #[test]
    fn credential_scope_names_key_region_and_service() {
        let signed = parts("/", &[("authorization", SIGNED_S3)]);
        let c = credential(&signed);
        assert_eq!(c.access_key.as_deref(), Some("AKIAIOSFODNN7EXAMPLE"));
        assert_eq!(c.region.as_deref(), Some("eu-west-1"));
        assert_eq!(c.service.as_deref(), Some("s3"));
        let presigned = "/b/k?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=111122223333%2F20260101%2Fap-south-1%2Fs3%2Faws4_request&X-Amz-Signature=00";
        let presigned = parts(presigned, &[]);
        let c = credential(&presigned);
        assert_eq!(c.access_key.as_deref(), Some("111122223333"));
        assert_eq!(c.region.as_deref(), Some("ap-south-1"));
        let v2 = parts("/", &[("authorization", "AWS AKIDV2:c2ln")]);
        let c = credential(&v2);
        assert_eq!(c.access_key.as_deref(), Some("AKIDV2"));
    }

    #[test]
    fn target_header_wins_over_the_scope() {
        let r = router();
        let auth = "AWS4-HMAC-SHA256 Credential=111122223333/20260101/eu-west-1/sqs/aws4_request, SignedHeaders=host, Signature=00";
        let route = r
            .route(&parts(
                "/",
                &[
                    ("authorization", auth),
                    ("x-amz-target", "DynamoDB_20120810.ListTables"),
                ],
            ))
            .unwrap();
        assert_eq!(route.service.spec().name, "dynamodb");
        assert_eq!(route.account, "111122223333");
        assert_eq!(route.region, "eu-west-1");
    }

    #[test]
    fn hosts_route_services_regions_and_virtual_buckets() {
        let r = router();
        let route = r
            .route(&parts("/", &[("host", "sqs.eu-central-1.localhost:4566")]))
            .unwrap();
        assert_eq!(route.service.spec().name, "sqs");
        assert_eq!(route.region, "eu-central-1");
        let route = r
            .route(&parts("/key", &[("host", "my.bucket.s3.localhost:4566")]))
            .unwrap();
        assert_eq!(route.service.spec().name, "s3");
        assert_eq!(route.virtual_bucket.as_deref(), Some("my.bucket"));
        let route = r
            .route(&parts(
                "/key",
                &[
                    ("host", "photos.s3.localhost"),
                    ("authorization", SIGNED_S3),
                ],
            ))
            .unwrap();
        assert_eq!(route.virtual_bucket.as_deref(), Some("photos"));
        let route = r
            .route(&parts(
                "/b/key",
                &[("host", "127.0.0.1:4566"), ("authorization", SIGNED_S3)],
            ))
            .unwrap();
        assert_eq!(route.virtual_bucket, None);
    }

    #[test]
    fn localstack_and_legacy_s3_hosts_route_like_amazonaws_ones() {
        let r = router();
        let cases = [
            (
                "bucket.s3.localhost.localstack.cloud:4566",
                Some("bucket"),
                "us-east-1",
            ),
            (
                "b.s3.eu-west-1.localhost.localstack.cloud",
                Some("b"),
                "eu-west-1",
            ),
            (
                "b.s3-eu-west-2.localhost.localstack.cloud",
                Some("b"),
                "eu-west-2",
            ),
            ("b.s3-us-west-2.amazonaws.com", Some("b"), "us-west-2"),
            ("b.s3-external-1.amazonaws.com", Some("b"), "us-east-1"),
            (
                "a.b.s3.dualstack.ap-south-1.amazonaws.com",
                Some("a.b"),
                "ap-south-1",
            ),
            ("s3-eu-west-3.amazonaws.com", None, "eu-west-3"),
            (
                "s3.eu-north-1.localhost.localstack.cloud",
                None,
                "eu-north-1",
            ),
        ];
        for (host, bucket, region) in cases {
            let route = r.route(&parts("/key", &[("host", host)])).unwrap();
            assert_eq!(route.service.spec().name, "s3", "{host}");
            assert_eq!(route.virtual_bucket.as_deref(), bucket, "{host}");
            assert_eq!(route.region, region, "{host}");
        }
        let route = r
            .route(&parts(
                "/",
                &[("host", "sqs.eu-west-1.localhost.localstack.cloud")],
            ))
            .unwrap();
        assert_eq!(route.service.spec().name, "sqs");
        assert_eq!(route.region, "eu-west-1");
        let unsigned_query = parts(
            "/?Action=ListQueues&Version=2012-11-05",
            &[("host", "sqs.ap-east-1.localhost.localstack.cloud")],
        );
        assert_eq!(r.route(&unsigned_query).unwrap().region, "ap-east-1");
    }

    #[test]
    fn function_url_hosts_go_to_lambda_whatever_the_request_says() {
        let r = router();
        let host = "abcdef0123.lambda-url.eu-west-1.localhost:4566";
        for headers in [
            vec![("host", host)],
            vec![("host", host), ("authorization", SIGNED_S3)],
        ] {
            let route = r.route(&parts("/items?x=1", &headers)).unwrap();
            assert_eq!(route.service.spec().name, "lambda");
            assert_eq!(route.raw_operation, Some("InvokeFunctionUrl"));
            assert_eq!(route.virtual_bucket, None);
        }
        let unsigned = r.route(&parts("/", &[("host", host)])).unwrap();
        assert_eq!(unsigned.region, "eu-west-1");
        let plain = r
            .route(&parts(
                "/",
                &[("host", "127.0.0.1"), ("authorization", SIGNED_S3)],
            ))
            .unwrap();
        assert_eq!(plain.raw_operation, None);
    }

    #[test]
    fn execute_api_hosts_and_paths_go_to_the_api_gateway_data_plane() {
        let r = router();
        let cases = [
            ("abc123.execute-api.localhost:4566", "/prod/x", None),
            ("abc123.execute-api.localhost", "/", None),
            (
                "abc123.execute-api.eu-west-1.amazonaws.com",
                "/prod",
                Some("eu-west-1"),
            ),
            (
                "abc123.execute-api.localhost.localstack.cloud:4566",
                "/p",
                None,
            ),
            ("127.0.0.1:4566", "/_aws/execute-api/abc123/prod/x", None),
            ("localhost", "/_aws/execute-api/abc123", None),
        ];
        for (host, path, region) in cases {
            for headers in [
                vec![("host", host)],
                vec![("host", host), ("authorization", SIGNED_S3)],
            ] {
                let route = r.route(&parts(path, &headers)).unwrap();
                assert_eq!(route.service.spec().name, "apigateway", "{host}{path}");
                assert_eq!(route.raw_operation, Some("ExecuteApi"), "{host}{path}");
                assert_eq!(route.virtual_bucket, None);
            }
            if let Some(region) = region {
                let route = r.route(&parts(path, &[("host", host)])).unwrap();
                assert_eq!(route.region, region);
            }
        }
        let bucket = r
            .route(&parts("/_aws/other", &[("host", "127.0.0.1")]))
            .unwrap();
        assert_eq!(bucket.service.spec().name, "s3");
        let control = r
            .route(&parts(
                "/restapis",
                &[("host", "apigateway.us-east-1.amazonaws.com")],
            ))
            .unwrap();
        assert_eq!(control.service.spec().name, "apigateway");
        assert_eq!(control.raw_operation, None);
    }

    #[test]
    fn unsigned_requests_route_by_version_queue_path_or_fall_back_to_s3() {
        let r = router();
        let route = r
            .route(&parts(
                "/?Action=GetCallerIdentity&Version=2011-06-15",
                &[("host", "127.0.0.1")],
            ))
            .unwrap();
        assert_eq!(route.service.spec().name, "sts");
        let post = |uri: &str, headers: &[(&str, &str)]| {
            let mut b = http::Request::builder().method("POST").uri(uri);
            for (k, v) in headers {
                b = b.header(*k, *v);
            }
            b.body(()).unwrap().into_parts().0
        };
        assert!(r.route(&post("/", &[("host", "127.0.0.1")])).is_none());
        let form = [
            ("host", "127.0.0.1"),
            ("content-type", "application/x-www-form-urlencoded"),
        ];
        assert!(r.route(&post("/", &form)).is_none());
        for unsigned_s3 in [
            parts("/", &[("host", "127.0.0.1")]),
            parts("/b/k", &[("host", "127.0.0.1")]),
            post(
                "/b/k",
                &[("host", "127.0.0.1"), ("content-type", "text/plain")],
            ),
            post("/b/k?AWSAccessKeyId=AKID&Expires=1&Signature=x", &form),
        ] {
            let route = r.route(&unsigned_s3).unwrap();
            assert_eq!(route.service.spec().name, "s3");
        }
        let p = parts("/000000000000/jobs", &[("host", "127.0.0.1")]);
        assert_eq!(r.route(&p).unwrap().service.spec().name, "sqs");
        let p = parts("/", &[("host", "127.0.0.1")]);
        assert_eq!(
            r.fallback(&p, Some("2011-06-15"), None)
                .unwrap()
                .service
                .spec()
                .name,
            "sts"
        );
        assert_eq!(
            r.fallback(&p, None, None).unwrap().service.spec().name,
            "s3"
        );
    }

    #[test]
    fn issued_keys_choose_their_account() {
        let r = router();
        let key = roto_core::identity::issue_access_key_id("ASIA", "444455556666");
        let auth = format!("AWS4-HMAC-SHA256 Credential={key}/20260101/us-west-2/sts/aws4_request, SignedHeaders=host, Signature=00");
        let route = r.route(&parts("/", &[("authorization", &auth)])).unwrap();
        assert_eq!(route.account, "444455556666");
        assert_eq!(route.region, "us-west-2");
    }
}
