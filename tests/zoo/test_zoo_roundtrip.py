"""Round trips through a real SeaweedFS and a file:// remote: byte-identical, idempotent."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from zoo_support import tree_bytes, zoo_cli

from asrbench.dataset import load_dataset
from asrbench.errors import NotFoundError
from asrbench.resolve import resolve_dir
from asrbench.zoo import ZooError, pull, push
from asrbench.zoo.config import load_config
from asrbench.zoo.listing import describe, list_entries
from asrbench.zoo.manifest import scan_folder
from asrbench.zoo.remote import open_remote


@pytest.mark.s3
@pytest.mark.parametrize("remote", ["s3", "local"])
def test_push_pull_round_trip_is_byte_identical(remote, zoo_cfg, mini_en, tmp_path, s3_env):
    first = push("dataset", "mini_en", source=mini_en, remote=remote, config=zoo_cfg)
    assert not first.already_published
    assert first.objects_uploaded == len({f.sha256 for f in scan_folder(mini_en)})
    assert first.bytes_uploaded == first.bytes_total

    again = push("dataset", "mini_en", source=mini_en, remote=remote, config=zoo_cfg)
    assert again.version == first.version
    assert again.objects_uploaded == 0 and again.bytes_uploaded == 0

    dest = tmp_path / "pulled"
    res = pull("dataset", "mini_en", remote=remote, config=zoo_cfg, dest=dest)
    assert res.version == first.version and res.placed
    assert res.bytes_downloaded == res.bytes_total
    assert tree_bytes(dest) == tree_bytes(mini_en)
    # The pulled folder is a valid dataset with the same identity.
    assert load_dataset(dest).content_hash() == load_dataset(mini_en).content_hash()

    # Pulling again from the warm cache downloads nothing and leaves the folder as is.
    res2 = pull("dataset", "mini_en", remote=remote, config=zoo_cfg, dest=dest)
    assert res2.bytes_downloaded == 0 and not res2.placed


@pytest.mark.s3
def test_second_push_of_changed_entry_uploads_only_new_files(zoo_cfg, synth, tmp_path, s3_env):
    import shutil

    v1 = push("dataset", "synth", source=synth, config=zoo_cfg)
    copy = tmp_path / "synth2"
    shutil.copytree(synth, copy)
    meta = copy / "metadata.tsv"
    meta.write_text(meta.read_text().replace("noise number 0", "noise number zero"))
    v2 = push("dataset", "synth", source=copy, config=zoo_cfg)
    assert v2.version != v1.version
    assert v2.objects_uploaded == 1  # only metadata.tsv changed; the audio is shared
    cfg = load_config(zoo_cfg)
    rem = open_remote(cfg.remote("s3"), cfg.base)
    versions = list_entries(rem)[("dataset", "synth")]
    summary = describe(rem, "dataset", "synth", versions)
    assert sorted(versions) == sorted([v1.version, v2.version])
    assert summary.latest == v2.version
    # Versions are immutable: the first one still pulls exactly as it was pushed.
    old = pull("dataset", "synth", version=v1.version, config=zoo_cfg, dest=tmp_path / "old")
    assert tree_bytes(Path(old.dest)) == tree_bytes(synth)


def test_manifest_records_the_dataset_identity(zoo_cfg, mini_en, tmp_path):
    """The hash push records is the dataset module's, computed from the same file scan."""
    from asrbench.zoo.push import _entry_meta

    files = scan_folder(mini_en)
    assert (
        _entry_meta("dataset", mini_en, files)["content_hash"]
        == load_dataset(mini_en).content_hash()
    )


@pytest.mark.s3
def test_cli_list_show_and_resolve_pulls(zoo_cfg, mini_en, tmp_path, s3_env):
    out = zoo_cli(
        "push",
        "-d",
        "mini_en",
        "--source",
        str(mini_en),
        "--config",
        str(zoo_cfg),
        "--json",
        "-q",
        env=s3_env,
    )
    assert out.returncode == 0, out.stderr
    version = json.loads(out.stdout)["version"]
    listing = zoo_cli("list", "--config", str(zoo_cfg), "--json", env=s3_env)
    assert listing.returncode == 0, listing.stderr
    data = json.loads(listing.stdout)
    entries = data["remotes"]["s3"]["entries"]
    assert [(e["kind"], e["id"], e["latest"]) for e in entries] == [("dataset", "mini_en", version)]
    assert entries[0]["versions"][0]["bytes"] == sum(len(b) for b in tree_bytes(mini_en).values())
    assert data["remotes"]["local"]["entries"] == []
    assert data["cache"]["entries"] == {}  # nothing pulled yet
    shown = zoo_cli("show", "dataset", "mini_en", "--config", str(zoo_cfg), env=s3_env)
    assert shown.returncode == 0 and version in shown.stdout and "(latest)" in shown.stdout

    # The resolver pulls into datasets/<ID> (here $ASRBENCH_DATASETS_DIR) when absent.
    path = resolve_dir("dataset", "mini_en", config=zoo_cfg)
    assert path == Path(s3_env["ASRBENCH_DATASETS_DIR"]) / "mini_en"
    assert tree_bytes(path) == tree_bytes(mini_en)
    assert resolve_dir("dataset", "mini_en", config=zoo_cfg) == path  # present: no pull
    listing = zoo_cli("list", "--config", str(zoo_cfg), "--json", env=s3_env)
    assert json.loads(listing.stdout)["cache"]["entries"] == {"dataset mini_en": [version]}
    assert resolve_dir("dataset", str(mini_en)) == mini_en  # a path is used as it is
    with pytest.raises(NotFoundError, match="holds no dataset 'nope'"):
        resolve_dir("dataset", "nope", config=zoo_cfg)
    # A pinned version: the local folder holds it, so it is used as it is.
    assert resolve_dir("dataset", f"mini_en@{version}", config=zoo_cfg) == path


@pytest.mark.s3
def test_pull_refuses_to_overwrite_other_content(zoo_cfg, mini_en, tmp_path, s3_env):
    push("dataset", "mini_en", source=mini_en, config=zoo_cfg)
    dest = tmp_path / "busy"
    dest.mkdir()
    (dest / "mine.txt").write_text("do not lose me")
    with pytest.raises(ZooError, match="--force"):
        pull("dataset", "mini_en", config=zoo_cfg, dest=dest)
    assert (dest / "mine.txt").read_text() == "do not lose me"
    # --force replaces a dataset, never a folder that is not one (issue 30 item 10)
    with pytest.raises(ZooError, match="not a dataset folder"):
        pull("dataset", "mini_en", config=zoo_cfg, dest=dest, force=True)
    assert (dest / "mine.txt").read_text() == "do not lose me"
    (dest / "mine.txt").unlink()
    pull("dataset", "mini_en", config=zoo_cfg, dest=dest, force=True)
    assert tree_bytes(dest) == tree_bytes(mini_en)


def test_model_travels_with_its_shared_helpers(tmp_path, monkeypatch):
    """A model whose card declares helpers from models/_common arrives complete: the pulled
    folder runs (and hashes) the same on a machine without that _common folder."""
    import shutil

    from zoo_support import write_zoo_yaml

    from asrbench.modelcard import load_model
    from asrbench.settings import REPO_ROOT

    monkeypatch.setenv("ASRBENCH_CACHE", str(tmp_path / "cache"))
    original = load_model(REPO_ROOT / "models" / "openai_api_en")
    assert original.card.image.shared  # contract.py, apiclient.py
    cfg = write_zoo_yaml(tmp_path / "zoo.yaml", {"local": {"url": "file://remote"}})
    push("model", "openai_api_en", source=original.root, config=cfg)
    elsewhere = tmp_path / "other-machine" / "models"  # no _common beside it
    monkeypatch.setenv("ASRBENCH_MODELS_DIR", str(tmp_path / "nowhere"))
    pull("model", "openai_api_en", config=cfg, dest=elsewhere / "openai_api_en")
    pulled = load_model(elsewhere / "openai_api_en")
    assert pulled.common == elsewhere / "openai_api_en" / "_shared"
    assert pulled.source_hash() == original.source_hash()
    # and pushing the pulled copy again publishes the very same version
    again = push("model", "openai_api_en", source=pulled.root, config=cfg)
    assert again.already_published
    shutil.rmtree(elsewhere)
