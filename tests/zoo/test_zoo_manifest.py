"""Manifests from a remote are untrusted: unsafe ones are refused before anything is written."""

from __future__ import annotations

import json

import pytest
from zoo_support import write_zoo_yaml

from asrbench.zoo import ZooError, pull
from asrbench.zoo.manifest import (
    FileEntry,
    build_manifest,
    dump_manifest,
    latest_key,
    manifest_key,
    object_key,
    parse_manifest,
)
from asrbench.zoo.remote import FileRemote

SHA = "a" * 64


def _manifest(paths: list[str], **extra_item) -> bytes:
    files = [FileEntry(p, 1, SHA) for p in paths]
    man = build_manifest("dataset", "evil", files, {})
    for item in man["files"]:
        item.update(extra_item)
    return dump_manifest(man)


def test_good_manifest_parses():
    man, files = parse_manifest(_manifest(["a.txt", "audio/b.wav"]), "dataset", "evil", None, "t")
    assert [f.path for f in files] == ["a.txt", "audio/b.wav"]
    assert man["version"] and len(man["version"]) == 16


@pytest.mark.parametrize(
    "bad_path, why",
    [
        ("../outside.txt", "'..'"),
        ("audio/../../outside.txt", "'..'"),
        ("/etc/passwd", "absolute"),
        ("~/x", "absolute"),
        ("C:/x", "absolute"),
        ("a\\..\\b", "backslash"),
        ("a//b", "empty component"),
        ("./a", "'.'"),
        ("", "empty"),
        (".zoo.json", "reserved"),
    ],
)
def test_unsafe_paths_are_refused(bad_path, why):
    with pytest.raises(ZooError, match="refusing manifest") as err:
        parse_manifest(_manifest([bad_path]), "dataset", "evil", None, "remote:key")
    assert why in str(err.value)


def test_symlinks_duplicates_and_tampering_are_refused():
    with pytest.raises(ZooError, match="symlinks are never placed"):
        parse_manifest(
            _manifest(["a"], type="symlink", target="/etc"), "dataset", "evil", None, "t"
        )
    with pytest.raises(ZooError, match="duplicate path"):
        parse_manifest(_manifest(["a", "a"]), "dataset", "evil", None, "t")
    with pytest.raises(ZooError, match="duplicate path"):
        parse_manifest(_manifest(["Audio", "audio"]), "dataset", "evil", None, "t")
    with pytest.raises(ZooError, match="also a file"):
        parse_manifest(_manifest(["a", "a/b"]), "dataset", "evil", None, "t")
    man = json.loads(_manifest(["a"]))
    man["files"][0]["size"] = 2  # content changed, version not: tampering
    with pytest.raises(ZooError, match="altered or corrupted"):
        parse_manifest(json.dumps(man).encode(), "dataset", "evil", None, "t")
    with pytest.raises(ZooError, match="not dataset 'other'"):
        parse_manifest(_manifest(["a"]), "dataset", "other", None, "t")
    with pytest.raises(ZooError, match="not valid JSON"):
        parse_manifest(b"{", "dataset", "evil", None, "t")


def test_pull_refuses_path_traversal_and_writes_nothing(tmp_path, monkeypatch):
    """End to end: a remote serving a consistent but malicious manifest."""
    monkeypatch.setenv("ASRBENCH_CACHE", str(tmp_path / "cache"))
    remote = FileRemote("evil", tmp_path / "remote")
    payload = b"pwned\n"
    import hashlib

    sha = hashlib.sha256(payload).hexdigest()
    remote.put_bytes(object_key(sha), payload)
    man = build_manifest("dataset", "evil", [FileEntry("../../escaped.txt", len(payload), sha)], {})
    remote.put_bytes(manifest_key("dataset", "evil", man["version"]), dump_manifest(man))
    remote.put_bytes(
        latest_key("dataset", "evil"), json.dumps({"version": man["version"]}).encode()
    )
    cfg = write_zoo_yaml(tmp_path / "zoo.yaml", {"evil": {"url": f"file://{tmp_path / 'remote'}"}})
    dest = tmp_path / "a" / "b" / "dest"
    with pytest.raises(ZooError, match=r"refusing manifest.*'\.\.'"):
        pull("dataset", "evil", config=cfg, dest=dest)
    assert not dest.exists()
    assert not list(tmp_path.rglob("escaped.txt"))
    assert not (tmp_path / "cache" / "zoo" / "objects").exists()
