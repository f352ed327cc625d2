"""SSM documents through boto3: create, versions, default version, get by version or
name, describe, list with filters, sharing, tags, deletion, and SSM's errors."""

from __future__ import annotations

import hashlib
import json

import pytest
from botocore.exceptions import ClientError

CONTENT = json.dumps({
    "schemaVersion": "2.2",
    "description": "Says hello",
    "parameters": {"who": {"type": "String", "description": "whom", "default": "world"}},
    "mainSteps": [{"action": "aws:runShellScript", "name": "hi", "inputs": {"runCommand": ["echo hi"]}}],
})


def content(n):
    return json.dumps({**json.loads(CONTENT), "description": f"v{n}"})


def error(excinfo):
    return excinfo.value.response["Error"]["Code"], excinfo.value.response["Error"]["Message"]


@pytest.fixture
def ssm(client):
    return client("ssm")


def test_create_document_describes_the_content(ssm):
    d = ssm.create_document(Content=CONTENT, Name="hello", DocumentType="Command",
                            Tags=[{"Key": "team", "Value": "ops"}])["DocumentDescription"]
    assert (d["Name"], d["DocumentVersion"], d["LatestVersion"], d["DefaultVersion"]) == ("hello", "1", "1", "1")
    assert (d["Status"], d["DocumentType"], d["DocumentFormat"], d["SchemaVersion"]) == ("Active", "Command", "JSON", "2.2")
    assert d["Hash"] == hashlib.sha256(CONTENT.encode()).hexdigest() and d["HashType"] == "Sha256"
    assert d["Description"] == "Says hello" and d["Owner"] == "000000000000"
    assert d["Parameters"] == [{"Name": "who", "Type": "String", "Description": "whom", "DefaultValue": "world"}]
    assert d["Tags"] == [{"Key": "team", "Value": "ops"}]
    assert "CreatedDate" in d


def test_get_document_returns_the_content_of_the_selected_version(ssm):
    ssm.create_document(Content=content(1), Name="doc", VersionName="first")
    up = ssm.update_document(Content=content(2), Name="doc", DocumentVersion="$LATEST")["DocumentDescription"]
    assert (up["DocumentVersion"], up["LatestVersion"], up["DefaultVersion"]) == ("2", "2", "1")
    assert ssm.get_document(Name="doc")["Content"] == content(1)
    assert ssm.get_document(Name="doc", DocumentVersion="$LATEST")["Content"] == content(2)
    assert ssm.get_document(Name="doc", VersionName="first")["DocumentVersion"] == "1"
    got = ssm.get_document(Name="doc", DocumentVersion="2")
    assert (got["Name"], got["DocumentType"], got["Status"], got["DocumentFormat"]) == ("doc", "Command", "Active", "JSON")


def test_default_version_moves_and_versions_list_it(ssm):
    ssm.create_document(Content=content(1), Name="doc")
    ssm.update_document(Content=content(2), Name="doc", VersionName="two")
    out = ssm.update_document_default_version(Name="doc", DocumentVersion="2")["Description"]
    assert out == {"Name": "doc", "DefaultVersion": "2", "DefaultVersionName": "two"}
    versions = ssm.list_document_versions(Name="doc")["DocumentVersions"]
    assert [(v["DocumentVersion"], v["IsDefaultVersion"]) for v in versions] == [("1", False), ("2", True)]
    assert ssm.describe_document(Name="doc")["Document"]["DocumentVersion"] == "2"


def test_update_refuses_same_content_and_stale_versions(ssm):
    ssm.create_document(Content=content(1), Name="doc")
    with pytest.raises(ClientError) as e:
        ssm.update_document(Content=content(1), Name="doc")
    assert error(e)[0] == "DuplicateDocumentContent"
    with pytest.raises(ClientError) as e:
        ssm.update_document(Content=content(2), Name="doc", DocumentVersion="7")
    assert error(e) == ("InvalidDocumentVersion", "The document version is not valid or does not exist.")


def test_missing_documents_and_bad_content(ssm):
    for call in (lambda: ssm.get_document(Name="nope"), lambda: ssm.describe_document(Name="nope"),
                 lambda: ssm.delete_document(Name="nope")):
        with pytest.raises(ClientError) as e:
            call()
        assert error(e) == ("InvalidDocument", "The specified document does not exist.")
    with pytest.raises(ClientError) as e:
        ssm.create_document(Content="{not json", Name="bad")
    assert error(e)[0] == "InvalidDocumentContent"
    ssm.create_document(Content=CONTENT, Name="twice")
    with pytest.raises(ClientError) as e:
        ssm.create_document(Content=CONTENT, Name="twice")
    assert error(e)[0] == "DocumentAlreadyExists"
    with pytest.raises(ClientError) as e:
        ssm.get_document(Name="twice", DocumentVersion="5")
    assert error(e)[0] == "InvalidDocumentVersion"


def test_yaml_documents_keep_their_content(ssm):
    body = "schemaVersion: '0.3'\ndescription: auto\nmainSteps: []\n"
    d = ssm.create_document(Content=body, Name="auto", DocumentType="Automation", DocumentFormat="YAML")["DocumentDescription"]
    assert (d["SchemaVersion"], d["DocumentFormat"], d["DocumentType"]) == ("0.3", "YAML", "Automation")
    assert ssm.get_document(Name="auto", DocumentFormat="YAML")["Content"] == body


def test_list_documents_filters_and_deletion(ssm):
    ssm.create_document(Content=CONTENT, Name="cmd")
    ssm.create_document(Content="schemaVersion: '0.3'\n", Name="auto", DocumentType="Automation", DocumentFormat="YAML")
    names = [d["Name"] for d in ssm.list_documents()["DocumentIdentifiers"]]
    assert names == ["cmd", "auto"]
    only = ssm.list_documents(Filters=[{"Key": "DocumentType", "Values": ["Automation"]}])["DocumentIdentifiers"]
    assert [d["Name"] for d in only] == ["auto"]
    page = ssm.list_documents(MaxResults=1)
    assert len(page["DocumentIdentifiers"]) == 1 and "NextToken" in page
    ssm.delete_document(Name="cmd")
    assert [d["Name"] for d in ssm.list_documents()["DocumentIdentifiers"]] == ["auto"]


def test_deleting_a_version_but_not_the_default(ssm):
    ssm.create_document(Content=content(1), Name="doc")
    ssm.update_document(Content=content(2), Name="doc")
    with pytest.raises(ClientError) as e:
        ssm.delete_document(Name="doc", DocumentVersion="1")
    assert error(e)[0] == "InvalidDocumentOperation"
    ssm.delete_document(Name="doc", DocumentVersion="2")
    assert [v["DocumentVersion"] for v in ssm.list_document_versions(Name="doc")["DocumentVersions"]] == ["1"]


def test_sharing_with_accounts(ssm):
    ssm.create_document(Content=CONTENT, Name="shared")
    ssm.modify_document_permission(Name="shared", PermissionType="Share", AccountIdsToAdd=["111111111111", "222222222222"])
    ssm.modify_document_permission(Name="shared", PermissionType="Share", AccountIdsToRemove=["111111111111"])
    out = ssm.describe_document_permission(Name="shared", PermissionType="Share")
    assert out["AccountIds"] == ["222222222222"]
    assert out["AccountSharingInfoList"] == [{"AccountId": "222222222222", "SharedDocumentVersion": "$DEFAULT"}]


def test_document_tags(ssm):
    ssm.create_document(Content=CONTENT, Name="tagged")
    ssm.add_tags_to_resource(ResourceType="Document", ResourceId="tagged", Tags=[{"Key": "a", "Value": "1"}])
    assert ssm.list_tags_for_resource(ResourceType="Document", ResourceId="tagged")["TagList"] == [{"Key": "a", "Value": "1"}]
    ssm.remove_tags_from_resource(ResourceType="Document", ResourceId="tagged", TagKeys=["a"])
    assert ssm.list_tags_for_resource(ResourceType="Document", ResourceId="tagged")["TagList"] == []
    with pytest.raises(ClientError) as e:
        ssm.list_tags_for_resource(ResourceType="Document", ResourceId="missing")
    assert error(e)[0] == "InvalidResourceId"
