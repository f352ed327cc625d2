//! Image manifests as PutImage reads them: which media type a manifest has (the call's
//! `imageManifestMediaType`, else the manifest's own `mediaType`, else what its schema
//! version implies), and what it refers to: the config and layer blobs of an image
//! manifest (Docker v2 schema 1 and 2, OCI), or the images of a manifest list or index.

use roto_core::AwsResult;
use serde_json::Value as Json;
use sha2::{Digest, Sha256};

use super::invalid_parameter;

/// Docker image manifest, schema 2.
const DOCKER_V2: &str = "application/vnd.docker.distribution.manifest.v2+json";
/// Docker manifest list.
const DOCKER_LIST: &str = "application/vnd.docker.distribution.manifest.list.v2+json";
/// Docker image manifest, schema 1 (unsigned and signed).
const DOCKER_V1: &str = "application/vnd.docker.distribution.manifest.v1+json";
const DOCKER_V1_SIGNED: &str = "application/vnd.docker.distribution.manifest.v1+prettyjws";
/// OCI image manifest.
const OCI_MANIFEST: &str = "application/vnd.oci.image.manifest.v1+json";
/// OCI image index.
const OCI_INDEX: &str = "application/vnd.oci.image.index.v1+json";

/// What a manifest is and refers to.
#[derive(Debug, PartialEq)]
pub(super) struct Manifest {
    /// Its media type.
    pub(super) media_type: String,
    /// Its config's media type (an image manifest's), ECR's `artifactMediaType`.
    pub(super) artifact_media_type: Option<String>,
    /// The image it refers to as an OCI `subject` (a signature's or an SBOM's).
    pub(super) subject: Option<String>,
    /// The config and layer blobs an image manifest names, with their stated sizes.
    pub(super) blobs: Vec<(String, i64)>,
    /// The images a manifest list or index names.
    pub(super) images: Vec<String>,
}

/// The digest ECR gives a manifest: the SHA-256 of its bytes.
pub(super) fn digest(manifest: &str) -> String {
    format!(
        "sha256:{}",
        hex::encode(Sha256::digest(manifest.as_bytes()))
    )
}

/// The digests of the descriptors in `doc[member]`, with their sizes.
fn descriptors(doc: &Json, member: &str, digest_member: &str) -> Vec<(String, i64)> {
    doc.get(member)
        .and_then(Json::as_array)
        .into_iter()
        .flatten()
        .filter_map(|d| {
            let digest = d.get(digest_member)?.as_str()?;
            Some((
                digest.to_string(),
                d.get("size").and_then(Json::as_i64).unwrap_or(0),
            ))
        })
        .collect()
}

/// Reads a manifest PutImage received, with the media type the call gave.
pub(super) fn read(text: &str, given: Option<&str>) -> AwsResult<Manifest> {
    let doc: Json = serde_json::from_str(text)
        .ok()
        .filter(Json::is_object)
        .ok_or_else(|| invalid_parameter("ImageManifest", "Invalid JSON syntax"))?;
    let own = doc.get("mediaType").and_then(Json::as_str);
    let schema = doc.get("schemaVersion").and_then(Json::as_i64);
    let media_type = match (given, own, schema) {
        (Some(g), Some(o), _) if g != o => {
            return Err(invalid_parameter(
                "imageManifestMediaType",
                &format!("Manifest media type '{g}' does not match the manifest's mediaType '{o}'"),
            ))
        }
        (Some(t), _, _) | (None, Some(t), _) => t,
        (None, None, Some(1)) => DOCKER_V1,
        (None, None, Some(2)) if doc.get("manifests").is_some() => OCI_INDEX,
        (None, None, Some(2)) => OCI_MANIFEST,
        (None, None, _) => {
            return Err(invalid_parameter(
                "ImageManifest",
                "Manifest schemaVersion must be 1 or 2",
            ))
        }
    };
    let mut manifest = Manifest {
        media_type: media_type.to_string(),
        artifact_media_type: None,
        subject: doc
            .pointer("/subject/digest")
            .and_then(Json::as_str)
            .map(str::to_string),
        blobs: Vec::new(),
        images: Vec::new(),
    };
    match media_type {
        DOCKER_V2 | OCI_MANIFEST => {
            let config = doc
                .pointer("/config/digest")
                .and_then(Json::as_str)
                .ok_or_else(|| {
                    invalid_parameter("ImageManifest", "Manifest must have a config digest")
                })?;
            let size = doc.pointer("/config/size").and_then(Json::as_i64);
            manifest.blobs.push((config.to_string(), size.unwrap_or(0)));
            manifest.blobs.extend(descriptors(&doc, "layers", "digest"));
            manifest.artifact_media_type = doc
                .pointer("/config/mediaType")
                .and_then(Json::as_str)
                .map(str::to_string);
        }
        DOCKER_V1 | DOCKER_V1_SIGNED => {
            manifest.blobs = descriptors(&doc, "fsLayers", "blobSum");
        }
        DOCKER_LIST | OCI_INDEX => {
            manifest.images = descriptors(&doc, "manifests", "digest")
                .into_iter()
                .map(|(d, _)| d)
                .collect();
        }
        other => {
            return Err(invalid_parameter(
                "imageManifestMediaType",
                &format!("Unsupported manifest media type '{other}'"),
            ))
        }
    }
    manifest.blobs.dedup();
    Ok(manifest)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_image_manifest_names_its_config_and_layers() {
        let text = r#"{"schemaVersion":2,
            "mediaType":"application/vnd.docker.distribution.manifest.v2+json",
            "config":{"mediaType":"application/vnd.docker.container.image.v1+json","size":7,"digest":"sha256:c"},
            "layers":[{"mediaType":"application/vnd.docker.image.rootfs.diff.tar.gzip","size":9,"digest":"sha256:l"}]}"#;
        let m = read(text, None).unwrap();
        assert_eq!(m.media_type, DOCKER_V2);
        assert_eq!(
            m.blobs,
            vec![("sha256:c".to_string(), 7), ("sha256:l".to_string(), 9)]
        );
        assert_eq!(
            m.artifact_media_type.as_deref(),
            Some("application/vnd.docker.container.image.v1+json")
        );
    }

    #[test]
    fn media_types_come_from_the_call_the_manifest_or_its_schema() {
        let oci = r#"{"schemaVersion":2,"config":{"digest":"sha256:c"},"layers":[]}"#;
        assert_eq!(read(oci, None).unwrap().media_type, OCI_MANIFEST);
        let index = r#"{"schemaVersion":2,"manifests":[{"digest":"sha256:i"}]}"#;
        let m = read(index, None).unwrap();
        assert_eq!((m.media_type.as_str(), m.images.len()), (OCI_INDEX, 1));
        let own = r#"{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{"digest":"sha256:c"}}"#;
        assert!(read(own, Some(DOCKER_V2)).is_err());
        assert!(read(oci, Some("text/plain")).is_err());
        assert!(read("[1]", None).is_err());
        assert!(read(r#"{"schemaVersion":3}"#, None).is_err());
    }
}
