"""Amazon ECR's push through the API, black-box with boto3: layer uploads in parts
(InitiateLayerUpload, UploadLayerPart, CompleteLayerUpload), PutImage with Docker and OCI
manifests and tag mutability, and the read side (BatchGetImage, DescribeImages, ListImages,
BatchCheckLayerAvailability, GetDownloadUrlForLayer, BatchDeleteImage) returning what was
pushed, with ECR's errors."""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import tarfile
import urllib.request

import pytest
from botocore.exceptions import ClientError

ACCOUNT = "000000000000"
DOCKER_V2 = "application/vnd.docker.distribution.manifest.v2+json"
OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json"
OCI_INDEX = "application/vnd.oci.image.index.v1+json"


@pytest.fixture
def ecr(client):
    return client("ecr")


@pytest.fixture
def repo(ecr):
    ecr.create_repository(repositoryName="app")
    return "app"


def error(excinfo):
    e = excinfo.value.response
    return e["Error"]["Code"], e["Error"]["Message"]


def digest(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def layer_tarball(text: str) -> bytes:
    """A tiny gzipped layer tarball holding one file."""
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w") as tar:
        body = text.encode()
        info = tarfile.TarInfo("hello.txt")
        info.size = len(body)
        tar.addfile(info, io.BytesIO(body))
    return gzip.compress(raw.getvalue(), mtime=0)


def upload(ecr, repo, data: bytes, part=None) -> str:
    """Uploads `data` as a layer in parts of `part` bytes; returns its digest."""
    started = ecr.initiate_layer_upload(repositoryName=repo)
    upload_id = started["uploadId"]
    part = part or len(data)
    for first in range(0, len(data), part):
        chunk = data[first:first + part]
        answer = ecr.upload_layer_part(repositoryName=repo, uploadId=upload_id,
                                       partFirstByte=first,
                                       partLastByte=first + len(chunk) - 1,
                                       layerPartBlob=chunk)
        assert answer["lastByteReceived"] == first + len(chunk) - 1
    done = ecr.complete_layer_upload(repositoryName=repo, uploadId=upload_id,
                                     layerDigests=[digest(data)])
    assert done["layerDigest"] == digest(data)
    assert done["uploadId"] == upload_id and done["registryId"] == ACCOUNT
    return done["layerDigest"]


def push_image(ecr, repo, text="hello", media_type=DOCKER_V2, tag="v1"):
    """Pushes a config and one layer, then the manifest; returns (manifest, answer)."""
    config = json.dumps({"architecture": "amd64", "os": "linux",
                         "rootfs": {"type": "layers", "diff_ids": []},
                         "config": {"Cmd": ["cat", "hello.txt"], "Env": [text]}}).encode()
    layer = layer_tarball(text)
    config_digest = upload(ecr, repo, config)
    layer_digest = upload(ecr, repo, layer, part=100)
    docker = media_type == DOCKER_V2
    manifest = json.dumps({
        "schemaVersion": 2,
        "mediaType": media_type,
        "config": {"mediaType": ("application/vnd.docker.container.image.v1+json" if docker
                                 else "application/vnd.oci.image.config.v1+json"),
                   "size": len(config), "digest": config_digest},
        "layers": [{"mediaType": ("application/vnd.docker.image.rootfs.diff.tar.gzip" if docker
                                  else "application/vnd.oci.image.layer.v1.tar+gzip"),
                    "size": len(layer), "digest": layer_digest}],
    })
    kwargs = {"imageTag": tag} if tag else {}
    answer = ecr.put_image(repositoryName=repo, imageManifest=manifest, **kwargs)
    return manifest, answer, len(config) + len(layer), layer


def test_push_then_pull_returns_the_manifest_and_sizes(ecr, repo):
    manifest, answer, size, layer = push_image(ecr, repo)
    image = answer["image"]
    assert image["imageId"] == {"imageDigest": digest(manifest.encode()), "imageTag": "v1"}
    assert image["imageManifestMediaType"] == DOCKER_V2
    assert image["imageManifest"] == manifest

    got = ecr.batch_get_image(repositoryName=repo, imageIds=[{"imageTag": "v1"}])
    assert got["failures"] == []
    assert got["images"][0]["imageManifest"] == manifest
    assert got["images"][0]["imageId"]["imageDigest"] == digest(manifest.encode())

    details = ecr.describe_images(repositoryName=repo)["imageDetails"]
    assert len(details) == 1
    d = details[0]
    assert d["imageDigest"] == digest(manifest.encode())
    assert d["imageTags"] == ["v1"]
    assert d["imageSizeInBytes"] == size
    assert d["imageManifestMediaType"] == DOCKER_V2
    assert d["artifactMediaType"] == "application/vnd.docker.container.image.v1+json"
    assert d["registryId"] == ACCOUNT and d["repositoryName"] == repo
    assert "imagePushedAt" in d

    listed = ecr.list_images(repositoryName=repo)["imageIds"]
    assert listed == [{"imageDigest": digest(manifest.encode()), "imageTag": "v1"}]

    layers = ecr.batch_check_layer_availability(
        repositoryName=repo, layerDigests=[digest(layer), "sha256:" + "0" * 64])["layers"]
    assert layers[0] == {"layerDigest": digest(layer), "layerAvailability": "AVAILABLE",
                         "layerSize": len(layer)}
    assert layers[1]["layerAvailability"] == "UNAVAILABLE"

    url = ecr.get_download_url_for_layer(repositoryName=repo, layerDigest=digest(layer))
    assert url["layerDigest"] == digest(layer)
    with urllib.request.urlopen(url["downloadUrl"]) as response:
        assert response.read() == layer


def test_oci_manifest_and_index(ecr, repo):
    manifest, answer, _, _ = push_image(ecr, repo, media_type=OCI_MANIFEST, tag=None)
    image_digest = answer["image"]["imageId"]["imageDigest"]
    assert answer["image"]["imageManifestMediaType"] == OCI_MANIFEST
    listed = ecr.list_images(repositoryName=repo, filter={"tagStatus": "UNTAGGED"})
    assert listed["imageIds"] == [{"imageDigest": image_digest}]
    assert ecr.list_images(repositoryName=repo, filter={"tagStatus": "TAGGED"})["imageIds"] == []

    index = json.dumps({"schemaVersion": 2, "mediaType": OCI_INDEX, "manifests": [
        {"mediaType": OCI_MANIFEST, "digest": image_digest, "size": len(manifest),
         "platform": {"architecture": "amd64", "os": "linux"}}]})
    put = ecr.put_image(repositoryName=repo, imageManifest=index, imageTag="multi")
    assert put["image"]["imageManifestMediaType"] == OCI_INDEX

    missing = json.dumps({"schemaVersion": 2, "mediaType": OCI_INDEX, "manifests": [
        {"mediaType": OCI_MANIFEST, "digest": "sha256:" + "1" * 64, "size": 10}]})
    with pytest.raises(ClientError) as e:
        ecr.put_image(repositoryName=repo, imageManifest=missing, imageTag="broken")
    assert error(e)[0] == "ReferencedImagesNotFoundException"


def test_part_gaps_and_bad_ranges_are_refused(ecr, repo):
    upload_id = ecr.initiate_layer_upload(repositoryName=repo)["uploadId"]
    assert ecr.initiate_layer_upload(repositoryName=repo)["partSize"] > 0
    ecr.upload_layer_part(repositoryName=repo, uploadId=upload_id, partFirstByte=0,
                          partLastByte=3, layerPartBlob=b"abcd")
    with pytest.raises(ClientError) as e:
        ecr.upload_layer_part(repositoryName=repo, uploadId=upload_id, partFirstByte=6,
                              partLastByte=9, layerPartBlob=b"efgh")
    assert error(e)[0] == "InvalidLayerPartException"
    assert e.value.response["lastValidByteReceived"] == 3
    assert e.value.response["uploadId"] == upload_id
    with pytest.raises(ClientError) as e:
        ecr.upload_layer_part(repositoryName=repo, uploadId=upload_id, partFirstByte=4,
                              partLastByte=9, layerPartBlob=b"efgh")
    assert error(e)[0] == "InvalidLayerPartException"
    ecr.upload_layer_part(repositoryName=repo, uploadId=upload_id, partFirstByte=4,
                          partLastByte=7, layerPartBlob=b"efgh")
    done = ecr.complete_layer_upload(repositoryName=repo, uploadId=upload_id,
                                     layerDigests=[digest(b"abcdefgh")])
    assert done["layerDigest"] == digest(b"abcdefgh")


def test_unknown_uploads_and_empty_uploads(ecr, repo):
    unknown = "00000000-0000-0000-0000-000000000000"
    with pytest.raises(ClientError) as e:
        ecr.upload_layer_part(repositoryName=repo, uploadId=unknown, partFirstByte=0,
                              partLastByte=0, layerPartBlob=b"a")
    assert error(e)[0] == "UploadNotFoundException"
    with pytest.raises(ClientError) as e:
        ecr.complete_layer_upload(repositoryName=repo, uploadId=unknown,
                                  layerDigests=[digest(b"a")])
    assert error(e)[0] == "UploadNotFoundException"
    upload_id = ecr.initiate_layer_upload(repositoryName=repo)["uploadId"]
    with pytest.raises(ClientError) as e:
        ecr.complete_layer_upload(repositoryName=repo, uploadId=upload_id,
                                  layerDigests=[digest(b"a")])
    assert error(e)[0] == "EmptyUploadException"
    with pytest.raises(ClientError) as e:
        ecr.initiate_layer_upload(repositoryName="missing")
    assert error(e)[0] == "RepositoryNotFoundException"


def test_a_wrong_digest_is_an_invalid_layer_and_a_second_upload_already_exists(ecr, repo):
    upload_id = ecr.initiate_layer_upload(repositoryName=repo)["uploadId"]
    ecr.upload_layer_part(repositoryName=repo, uploadId=upload_id, partFirstByte=0,
                          partLastByte=4, layerPartBlob=b"layer")
    with pytest.raises(ClientError) as e:
        ecr.complete_layer_upload(repositoryName=repo, uploadId=upload_id,
                                  layerDigests=[digest(b"other")])
    assert error(e)[0] == "InvalidLayerException"
    assert ecr.batch_check_layer_availability(
        repositoryName=repo, layerDigests=[digest(b"other")]
    )["layers"][0]["layerAvailability"] == "UNAVAILABLE"

    upload(ecr, repo, b"layer")
    with pytest.raises(ClientError) as e:
        upload(ecr, repo, b"layer")
    assert error(e)[0] == "LayerAlreadyExistsException"


def test_put_image_needs_its_layers(ecr, repo):
    manifest = json.dumps({"schemaVersion": 2, "mediaType": DOCKER_V2,
                           "config": {"mediaType": "application/vnd.docker.container.image.v1+json",
                                      "size": 2, "digest": "sha256:" + "a" * 64},
                           "layers": []})
    with pytest.raises(ClientError) as e:
        ecr.put_image(repositoryName=repo, imageManifest=manifest, imageTag="x")
    code, message = error(e)
    assert code == "LayersNotFoundException" and "sha256:" + "a" * 64 in message
    for bad in ["not json", json.dumps({"schemaVersion": 7})]:
        with pytest.raises(ClientError) as e:
            ecr.put_image(repositoryName=repo, imageManifest=bad)
        assert error(e)[0] == "InvalidParameterException"
    with pytest.raises(ClientError) as e:
        ecr.put_image(repositoryName=repo, imageManifest=manifest,
                      imageManifestMediaType="text/plain")
    assert error(e)[0] == "InvalidParameterException"


def test_put_image_twice_and_digest_checks(ecr, repo):
    manifest, answer, _, _ = push_image(ecr, repo)
    with pytest.raises(ClientError) as e:
        ecr.put_image(repositoryName=repo, imageManifest=manifest, imageTag="v1")
    assert error(e)[0] == "ImageAlreadyExistsException"
    with pytest.raises(ClientError) as e:
        ecr.put_image(repositoryName=repo, imageManifest=manifest)
    assert error(e)[0] == "ImageAlreadyExistsException"
    with pytest.raises(ClientError) as e:
        ecr.put_image(repositoryName=repo, imageManifest=manifest, imageTag="v2",
                      imageDigest="sha256:" + "b" * 64)
    assert error(e)[0] == "ImageDigestDoesNotMatchException"
    # A second tag on the same image.
    ecr.put_image(repositoryName=repo, imageManifest=manifest, imageTag="latest",
                  imageDigest=answer["image"]["imageId"]["imageDigest"])
    details = ecr.describe_images(repositoryName=repo)["imageDetails"]
    assert details[0]["imageTags"] == ["latest", "v1"]


def test_tags_move_in_mutable_repositories_only(ecr):
    ecr.create_repository(repositoryName="mutable")
    ecr.create_repository(repositoryName="fixed", imageTagMutability="IMMUTABLE")
    first, _, _, _ = push_image(ecr, "mutable", text="one", tag="latest")
    second, _, _, _ = push_image(ecr, "mutable", text="two", tag="latest")
    got = ecr.batch_get_image(repositoryName="mutable", imageIds=[{"imageTag": "latest"}])
    assert got["images"][0]["imageManifest"] == second
    untagged = ecr.list_images(repositoryName="mutable", filter={"tagStatus": "UNTAGGED"})
    assert untagged["imageIds"] == [{"imageDigest": digest(first.encode())}]

    push_image(ecr, "fixed", text="one", tag="latest")
    with pytest.raises(ClientError) as e:
        push_image(ecr, "fixed", text="two", tag="latest")
    code, message = error(e)
    assert code == "ImageTagAlreadyExistsException" and "'latest'" in message


def test_read_side_errors(ecr, repo):
    manifest, _, _, _ = push_image(ecr, repo)
    image_digest = digest(manifest.encode())
    got = ecr.batch_get_image(repositoryName=repo, imageIds=[
        {"imageTag": "nope"}, {"imageDigest": "bad"},
        {"imageTag": "v1", "imageDigest": "sha256:" + "c" * 64}, {"imageDigest": image_digest}])
    assert [f["failureCode"] for f in got["failures"]] == [
        "ImageNotFound", "InvalidImageDigest", "ImageTagDoesNotMatchDigest"]
    assert got["images"][0]["imageId"] == {"imageDigest": image_digest}
    with pytest.raises(ClientError) as e:
        ecr.describe_images(repositoryName=repo, imageIds=[{"imageTag": "nope"}])
    assert error(e)[0] == "ImageNotFoundException"
    with pytest.raises(ClientError) as e:
        ecr.get_download_url_for_layer(repositoryName=repo, layerDigest="sha256:" + "d" * 64)
    assert error(e)[0] == "LayersNotFoundException"
    upload(ecr, repo, b"loose layer")
    with pytest.raises(ClientError) as e:
        ecr.get_download_url_for_layer(repositoryName=repo, layerDigest=digest(b"loose layer"))
    assert error(e)[0] == "LayerInaccessibleException"


def test_scans_and_status_of_a_pushed_image(ecr, repo):
    push_image(ecr, repo)
    with pytest.raises(ClientError) as e:
        ecr.describe_image_scan_findings(repositoryName=repo, imageId={"imageTag": "v1"})
    assert error(e)[0] == "ScanNotFoundException"
    started = ecr.start_image_scan(repositoryName=repo, imageId={"imageTag": "v1"})
    assert started["imageScanStatus"]["status"] == "COMPLETE"
    findings = ecr.describe_image_scan_findings(repositoryName=repo, imageId={"imageTag": "v1"})
    assert findings["imageScanFindings"]["findings"] == []
    status = ecr.describe_image_replication_status(repositoryName=repo, imageId={"imageTag": "v1"})
    assert status["replicationStatuses"] == []


def test_delete_by_tag_then_digest_and_repository(ecr, repo):
    manifest, _, _, _ = push_image(ecr, repo)
    image_digest = digest(manifest.encode())
    ecr.put_image(repositoryName=repo, imageManifest=manifest, imageTag="latest")
    deleted = ecr.batch_delete_image(repositoryName=repo, imageIds=[{"imageTag": "latest"}])
    assert deleted["imageIds"] == [{"imageDigest": image_digest, "imageTag": "latest"}]
    assert ecr.list_images(repositoryName=repo)["imageIds"] == [
        {"imageDigest": image_digest, "imageTag": "v1"}]
    with pytest.raises(ClientError) as e:
        ecr.delete_repository(repositoryName=repo)
    assert error(e)[0] == "RepositoryNotEmptyException"
    deleted = ecr.batch_delete_image(repositoryName=repo, imageIds=[{"imageDigest": image_digest}])
    assert deleted["imageIds"] == [{"imageDigest": image_digest, "imageTag": "v1"}]
    assert ecr.describe_images(repositoryName=repo)["imageDetails"] == []
    push_image(ecr, repo, text="again", tag="v2")
    ecr.delete_repository(repositoryName=repo, force=True)
    ecr.create_repository(repositoryName=repo)
    assert ecr.batch_check_layer_availability(
        repositoryName=repo, layerDigests=["sha256:" + "e" * 64])["layers"][0][
            "layerAvailability"] == "UNAVAILABLE"
    assert ecr.list_images(repositoryName=repo)["imageIds"] == []
