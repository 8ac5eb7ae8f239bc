"""Issue 30 items 1 and 10 through a real SeaweedFS: a zoo entry's own card never names a folder
outside datasets/ or results/, a missing object is one error naming it, `--force` never deletes a
folder that is not a dataset, and a remote that does not exist is said to be missing."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from zoo_support import BUCKET, make_dataset, write_zoo_yaml, zoo_cli

from asrbench.settings import REPO_ROOT
from tests.factories import make_model

HOSTILE = "../../somewhere/victim"


def publish_raw(cfg: Path, remote: str, entry_id: str, folder: Path) -> tuple[str, list]:
    """Publish `folder` as dataset `entry_id` object by object, as a hostile or broken zoo
    would hold it (no push-side validation); returns (version, file entries)."""
    from asrbench.zoo.config import entry_remote
    from asrbench.zoo.manifest import (
        build_manifest,
        dump_manifest,
        latest_key,
        manifest_key,
        object_key,
        scan_folder,
    )
    from asrbench.zoo.remote import open_remote

    conf, spec = entry_remote("dataset", entry_id, remote, cfg)
    rem = open_remote(spec, conf.base)
    try:
        files = scan_folder(folder)
        rem.upload_files([(folder / f.path, object_key(f.sha256)) for f in files])
        man = build_manifest("dataset", entry_id, files, {})
        rem.put_bytes(manifest_key("dataset", entry_id, man["version"]), dump_manifest(man))
        rem.put_bytes(
            latest_key("dataset", entry_id), json.dumps({"version": man["version"]}).encode()
        )
        return man["version"], files
    finally:
        rem.close()


def fake_model(root: Path) -> Path:
    return make_model(
        root,
        "fake_r30",
        "import sys\nfrom pathlib import Path\n"
        "out = Path(sys.argv[2]); out.mkdir(parents=True, exist_ok=True)\n"
        "with open(out / 'hyp.tsv', 'a') as f:\n"
        "    for line in Path(sys.argv[1]).read_text().splitlines():\n"
        "        f.write(line.partition('\\t')[0] + '\\tnoise number\\n')\n",
    )


@pytest.mark.s3
def test_a_zoo_card_with_a_hostile_id_is_refused_by_pull_and_benchmark(zoo_cfg, tmp_path, s3_env):
    src = make_dataset(tmp_path / "src" / "evil", n=2, seconds=0.5)
    (src / "dataset.yaml").write_text(f"id: {HOSTILE!r}\nlanguage: en\nsample_rate: 16000\n")
    publish_raw(zoo_cfg, "s3", "evil", src)
    victim = tmp_path / "somewhere" / "victim"
    victim.mkdir(parents=True)
    (victim / "precious.txt").write_text("do not lose me")

    p = zoo_cli("pull", "-d", "evil", "--config", str(zoo_cfg), env=s3_env)
    assert p.returncode == 2, p.stderr
    assert "dataset.yaml declares id" in p.stderr and repr(HOSTILE) in p.stderr
    assert "Traceback" not in p.stderr
    datasets = Path(s3_env["ASRBENCH_DATASETS_DIR"])
    assert not (datasets / "evil").exists()

    # ops/benchmark -d evil pulls it on demand: refused the same way, nothing deleted
    results = tmp_path / "r"  # r/fake_r30/../../somewhere/victim is the victim
    model = fake_model(tmp_path / "models")
    p = subprocess.run(
        [
            str(REPO_ROOT / "ops" / "benchmark"),
            "-m",
            str(model),
            "-d",
            "evil",
            "--runner",
            "local",
            "--results",
            str(results),
            "--no-progress",
        ],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, **s3_env, "ASRBENCH_ZOO_CONFIG": str(zoo_cfg)},
    )
    assert p.returncode == 2, p.stdout + p.stderr
    assert "dataset.yaml declares id" in p.stderr and "Traceback" not in p.stderr
    assert sorted(victim.iterdir()) == [victim / "precious.txt"]
    assert (victim / "precious.txt").read_text() == "do not lose me"
    assert not (datasets / "evil").exists() and not list(results.rglob("summary.json"))


@pytest.mark.s3
@pytest.mark.parametrize("remote", ["s3", "local"])
def test_an_object_missing_on_the_remote_is_one_error_naming_it(zoo_cfg, tmp_path, s3_env, remote):
    from asrbench.zoo.config import entry_remote
    from asrbench.zoo.manifest import object_key
    from asrbench.zoo.remote import open_remote

    src = make_dataset(tmp_path / "src" / "holey", n=3, seconds=0.5)
    _, files = publish_raw(zoo_cfg, remote, "holey", src)
    gone = next(f for f in files if f.path.endswith(".wav"))
    conf, spec = entry_remote("dataset", "holey", remote, zoo_cfg)
    rem = open_remote(spec, conf.base)
    rem.delete(object_key(gone.sha256))
    rem.close()
    p = zoo_cli("pull", "-d", "holey", "--remote", remote, "--config", str(zoo_cfg), env=s3_env)
    assert p.returncode == 1, p.stderr
    assert "Traceback" not in p.stderr
    assert f"object {object_key(gone.sha256)} is missing on remote {remote!r}" in p.stderr
    assert "`ops/zoo verify`" in p.stderr and gone.path in p.stderr
    assert not (Path(s3_env["ASRBENCH_DATASETS_DIR"]) / "holey").exists()


@pytest.mark.s3
def test_pull_force_never_deletes_a_folder_that_is_not_a_dataset(zoo_cfg, tmp_path, s3_env):
    src = make_dataset(tmp_path / "src" / "plain", n=2, seconds=0.5)
    publish_raw(zoo_cfg, "s3", "plain", src)
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "thesis.tex").write_text("three years of work")
    p = zoo_cli(
        "pull", "-d", "plain", "--dest", str(mine), "--force", "--config", str(zoo_cfg), env=s3_env
    )
    assert p.returncode == 2, p.stderr
    assert "not a dataset folder" in p.stderr and "Traceback" not in p.stderr
    assert sorted(mine.iterdir()) == [mine / "thesis.tex"]
    # a dataset there is replaced, as before
    p = zoo_cli(
        "pull", "-d", "plain", "--dest", str(tmp_path / "ds"), "--config", str(zoo_cfg), env=s3_env
    )
    assert p.returncode == 0, p.stderr
    (tmp_path / "ds" / "metadata.tsv").write_text("ID\tAUDIO\tDURATION\tTEXT\n")
    p = zoo_cli(
        "pull",
        "-d",
        "plain",
        "--dest",
        str(tmp_path / "ds"),
        "--force",
        "--config",
        str(zoo_cfg),
        env=s3_env,
    )
    assert p.returncode == 0, p.stderr


@pytest.mark.s3
def test_a_remote_that_does_not_exist_is_named_as_missing(seaweed, tmp_path, s3_env):
    cfg = write_zoo_yaml(
        tmp_path / "zoo.yaml",
        {
            "gone": {"url": f"file://{tmp_path / 'no-such-folder'}"},
            "nobucket": {
                "url": f"s3://no-such-bucket-r30/{BUCKET}",
                "endpoint_url": seaweed.endpoint,
                "max_attempts": 1,
            },
        },
    )
    for remote in ("gone", "nobucket"):
        p = zoo_cli("pull", "-d", "anything", "--remote", remote, "--config", str(cfg), env=s3_env)
        assert p.returncode == 2, p.stderr
        assert "holds no dataset" not in p.stderr and "Traceback" not in p.stderr
        assert "does not exist" in p.stderr, p.stderr
