"""zoo.yaml parsing: remotes, entries, and errors that name the key at fault."""

from __future__ import annotations

import os
import subprocess

import pytest

from asrbench.settings import REPO_ROOT
from asrbench.zoo import ZooError, push
from asrbench.zoo.config import load_config


def test_repo_zoo_yaml_parses():
    cfg = load_config(REPO_ROOT / "zoo.yaml")
    assert cfg.default_remote == "local"
    assert cfg.remote("local").url == "file://.zoo"
    assert cfg.remote_for("dataset", "mini_en").name == "local"


def test_remotes_and_entries(tmp_path):
    p = tmp_path / "zoo.yaml"
    p.write_text(
        "remotes:\n"
        "  pub: {url: 's3://b/p/q', endpoint_url: 'http://127.0.0.1:1', anonymous: true}\n"
        "  local: {url: 'file://store'}\n"
        "datasets:\n  d1: {remote: pub, version: 0123456789abcdef}\n"
    )
    cfg = load_config(p)
    assert cfg.default_remote == "local"
    pub = cfg.remote_for("dataset", "d1")
    assert pub.bucket_prefix() == ("b", "p/q") and pub.anonymous
    assert cfg.entries[("dataset", "d1")].version == "0123456789abcdef"
    assert cfg.remote("local").file_root(cfg.base) == tmp_path / "store"


@pytest.mark.parametrize(
    "text, match",
    [
        ("remotes: {}\n", "no remotes defined"),
        ("remotes: {x: {url: 'http://a'}}\n", "must start with s3:// or file://"),
        ("remotes: {x: {url: 's3://'}}\n", "has no bucket"),
        ("remotes: {x: {url: 'file://a', secret: 1}}\n", r"unknown key\(s\) \['secret'\]"),
        ("remotes: {x: {url: 'file://a'}}\ndefault_remote: y\n", "default_remote 'y'"),
        ("remotes: {x: {url: 'file://a'}}\ndatasets: {d: {remote: z}}\n", "datasets.d.remote 'z'"),
        ("remotes: [\n", "cannot parse YAML"),
    ],
)
def test_bad_config_is_explained(tmp_path, text, match):
    p = tmp_path / "zoo.yaml"
    p.write_text(text)
    with pytest.raises(ZooError, match=match):
        load_config(p)


def test_ops_wrappers_round_trip_on_a_folder_remote(tmp_path, mini_en):
    """The bash wrappers users type, end to end on the file:// remote."""
    cfg = tmp_path / "zoo.yaml"
    cfg.write_text("remotes: {local: {url: 'file://remote'}}\n")
    env = {**os.environ, "ASRBENCH_CACHE": str(tmp_path / "cache")}
    ops = REPO_ROOT / "ops"

    def run(*a: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(ops / a[0]), *a[1:]], env=env, capture_output=True, text=True, timeout=120
        )

    out = run("push", "-d", "mini_en", "--source", str(mini_en), "--config", str(cfg), "-q")
    assert out.returncode == 0, out.stderr
    assert "published on local" in out.stdout
    out = run("pull", "-d", "mini_en", "--config", str(cfg), "--dest", str(tmp_path / "d"))
    assert out.returncode == 0 and "placed at" in out.stdout, out.stderr
    out = run("zoo", "list", "--config", str(cfg))
    assert out.returncode == 0 and "mini_en" in out.stdout
    out = run("pull", "-d", "mini_en", "-m", "x", "--config", str(cfg))
    assert out.returncode == 2 and "exactly one of -d" in out.stderr


def test_push_refuses_invalid_dataset_and_symlinks(tmp_path):
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "metadata.tsv").write_text("ID\tAUDIO\tDURATION\tTEXT\nu1\taudio/none.wav\t1.0\thi\n")
    (bad / "dataset.yaml").write_text("id: bad\n")
    cfg = tmp_path / "zoo.yaml"
    cfg.write_text("remotes: {local: {url: 'file://remote'}}\n")
    with pytest.raises(ZooError, match="(?s)not a valid dataset.*missing-audio"):
        push("dataset", "bad", source=bad, config=cfg)
    (bad / "link.wav").symlink_to("/etc/hostname")
    with pytest.raises(ZooError, match="symlinks cannot be pushed"):
        push("dataset", "bad", source=bad, config=cfg)
    assert not (tmp_path / "remote").exists()
