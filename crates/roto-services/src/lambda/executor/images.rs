//! Which container image a function runs in under the docker executor.
//!
//! A runtime maps by default to its public Lambda base image (`python3.12` ->
//! `public.ecr.aws/lambda/python:3.12`). `--lambda-image-registry PREFIX` replaces the
//! `public.ecr.aws/lambda` prefix for every runtime (a mirror, a registry of one's own, or
//! names built locally), and `--lambda-image RUNTIME=IMAGE` maps one runtime (or one image
//! URI of a container-image function) to an image of the user's choosing; the exact
//! mapping wins over the prefix. A container-image function's ECR-style URI
//! (`<account>.dkr.ecr.<region>.amazonaws.com/<repository>:<tag>`) also answers to the
//! `<repository>:<tag>` it was built under locally, since nothing pushes to AWS's registry.

use std::collections::BTreeMap;

/// The registry prefix of the public Lambda base images.
pub const PUBLIC_PREFIX: &str = "public.ecr.aws/lambda";

/// The flags that choose images, as error messages name them.
pub const FLAGS: &str = "--lambda-image RUNTIME=IMAGE (ROTO_LAMBDA_IMAGE) or --lambda-image-registry PREFIX (ROTO_LAMBDA_IMAGE_REGISTRY)";

/// The mapping from runtimes (and image URIs) to the images the engine runs.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Images {
    prefix: Option<String>,
    mapped: BTreeMap<String, String>,
}

impl Images {
    /// The mapping the options give: `mappings` holds `RUNTIME=IMAGE` entries separated by
    /// commas or newlines, `prefix` the registry prefix.
    pub fn parse(mappings: &str, prefix: Option<&str>) -> Result<Images, String> {
        let mut mapped = BTreeMap::new();
        for entry in mappings.split([',', '\n']).map(str::trim) {
            if entry.is_empty() {
                continue;
            }
            let (runtime, image) = parse_entry(entry)?;
            mapped.insert(runtime.to_string(), image.to_string());
        }
        let prefix = prefix
            .map(|p| p.trim().trim_end_matches('/').to_string())
            .filter(|p| !p.is_empty());
        Ok(Images { prefix, mapped })
    }

    /// The image a runtime's functions run in, or `None` for a runtime without one.
    pub fn for_runtime(&self, runtime: &str) -> Option<String> {
        if let Some(image) = self.mapped.get(runtime) {
            return Some(image.clone());
        }
        let prefix = self.prefix.as_deref().unwrap_or(PUBLIC_PREFIX);
        Some(format!("{prefix}/{}", repository_and_tag(runtime)?))
    }

    /// The images a container-image function's `ImageUri` may be found under, in the order
    /// to look: the mapped image if `--lambda-image` names the URI, else the URI itself and,
    /// for an ECR URI, the `<repository>:<tag>` it was built under.
    pub fn for_uri(&self, uri: &str) -> Vec<String> {
        if let Some(image) = self.mapped.get(uri) {
            return vec![image.clone()];
        }
        let mut candidates = vec![uri.to_string()];
        if let Some((host, local)) = uri.split_once('/') {
            if host.contains(".dkr.ecr.") && !local.is_empty() {
                candidates.push(local.to_string());
            }
        }
        candidates
    }
}

/// `RUNTIME=IMAGE`, checked: both sides non-empty.
pub fn parse_entry(entry: &str) -> Result<(&str, &str), String> {
    match entry.split_once('=') {
        Some((runtime, image)) if !runtime.trim().is_empty() && !image.trim().is_empty() => {
            Ok((runtime.trim(), image.trim()))
        }
        _ => Err(format!(
            "'{entry}' is not RUNTIME=IMAGE (python3.12=my-registry/python:3.12)"
        )),
    }
}

/// The repository and tag of a runtime's base image: `python3.12` -> `python:3.12`,
/// `nodejs20.x` -> `nodejs:20`, `provided.al2023` -> `provided:al2023`, `java21`, `ruby3.3`
/// and `dotnet8` alike.
fn repository_and_tag(runtime: &str) -> Option<String> {
    Some(match runtime {
        "provided" => "provided:alami".to_string(),
        r if r.starts_with("provided.") => format!("provided:{}", &r["provided.".len()..]),
        r => {
            let at = r.find(|c: char| c.is_ascii_digit()).filter(|at| *at > 0)?;
            let (family, version) = r.split_at(at);
            format!("{family}:{}", version.strip_suffix(".x").unwrap_or(version))
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runtimes_map_to_the_public_lambda_images_by_default() {
        let images = Images::default();
        let image = |r| images.for_runtime(r).unwrap();
        assert_eq!(image("python3.12"), "public.ecr.aws/lambda/python:3.12");
        assert_eq!(image("nodejs20.x"), "public.ecr.aws/lambda/nodejs:20");
        assert_eq!(
            image("provided.al2023"),
            "public.ecr.aws/lambda/provided:al2023"
        );
        assert_eq!(image("provided.al2"), "public.ecr.aws/lambda/provided:al2");
        assert_eq!(image("provided"), "public.ecr.aws/lambda/provided:alami");
        assert_eq!(image("java21"), "public.ecr.aws/lambda/java:21");
        assert_eq!(image("ruby3.3"), "public.ecr.aws/lambda/ruby:3.3");
        assert_eq!(images.for_runtime("cobol"), None);
    }

    #[test]
    fn a_mapping_wins_over_the_prefix_which_wins_over_the_default() {
        let images = Images::parse(
            "python3.12=mine/py:1, nodejs20.x = mirror.local/node:20\n",
            Some("mirror.local:5000/lambda/"),
        )
        .unwrap();
        assert_eq!(images.for_runtime("python3.12").unwrap(), "mine/py:1");
        assert_eq!(
            images.for_runtime("nodejs20.x").unwrap(),
            "mirror.local/node:20"
        );
        assert_eq!(
            images.for_runtime("provided.al2023").unwrap(),
            "mirror.local:5000/lambda/provided:al2023"
        );
    }

    #[test]
    fn entries_must_name_a_runtime_and_an_image() {
        for bad in ["python3.12", "=img", "python3.12=", " = "] {
            let err = Images::parse(bad, None).unwrap_err();
            assert!(err.contains("is not RUNTIME=IMAGE"), "{err}");
        }
    }

    #[test]
    fn ecr_uris_also_answer_to_their_local_name() {
        let uri = "123456789012.dkr.ecr.us-east-1.amazonaws.com/app:v1";
        assert_eq!(Images::default().for_uri(uri), [uri, "app:v1"]);
        assert_eq!(Images::default().for_uri("app:v1"), ["app:v1"]);
        assert_eq!(
            Images::default().for_uri("ghcr.io/me/app:v1"),
            ["ghcr.io/me/app:v1"]
        );
        let mapped = Images::parse(&format!("{uri}=built:here"), None).unwrap();
        assert_eq!(mapped.for_uri(uri), ["built:here"]);
    }
}
