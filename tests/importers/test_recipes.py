"""Every recipe, offline: a file:// mirror of its native archive layout is built from real audio
(../shared/data), imported through `ops/import <recipe> --from`, and checked utterance by
utterance (count, duration, text as published). The checksums are computed by the test and
passed with --checksum, as a user with a re-packed mirror would."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from asrbench.dataset import load_dataset
from asrbench.importers.recipes import RECIPES
from tests.importers import recipe_mirrors

LOSSY = {"commonvoice", "gigaspeech-test", "earnings21"}  # MP3/Opus: decoder frame counts


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("ASRBENCH_DATASETS_DIR", str(tmp_path / "datasets"))
    monkeypatch.setenv("ASRBENCH_CACHE", str(tmp_path / "cache"))
    return tmp_path


def test_every_recipe_has_an_offline_test() -> None:
    untested = set(RECIPES) - set(recipe_mirrors.BUILDERS)
    # test-other shares test-clean's code and layout; earnings22 shares earnings21's.
    assert untested == {"librispeech-test-other", "earnings22"}


@pytest.mark.parametrize("name", sorted(recipe_mirrors.BUILDERS))
def test_recipe_from_a_file_mirror(name: str, shared: Path, env: Path, cli) -> None:
    base, checksums, expect = recipe_mirrors.BUILDERS[name](shared, env / "mirror")
    source = base.as_uri()
    args = ["import", name, "--from", source, "--id", "t"]
    if name == "fleurs":
        args += ["--language", "en_us"]
    for c in checksums:
        args += ["--checksum", c]
    code, out, err = cli(*args)
    assert code == 0, err
    ds = load_dataset(env / "datasets" / "t")
    got = {u.id: (u.duration, u.text) for u in ds}
    assert sorted(got) == sorted(expect)
    tol = 0.03 if name in LOSSY else 0.0015
    for uid, (dur, text) in expect.items():
        assert got[uid][1] == text, uid
        assert got[uid][0] == pytest.approx(dur, abs=tol), uid
    meta = yaml.safe_load((env / "datasets" / "t" / "dataset.yaml").read_text())
    recipe = RECIPES[name]
    assert meta["recipe"] == name and meta["licence"] == recipe.licence
    assert meta["citation"] == recipe.citation and meta["url"] == recipe.homepage
    assert all(a["url"].startswith("file://") and len(a["sha256"]) == 64 for a in meta["archives"])
    assert all("--checksum" in a["verified"] for a in meta["archives"])
    assert not list((env / "cache" / "extract").iterdir()), "scratch extraction left behind"
    # A rerun finds the verified archives in the cache: no new download.
    code, _, err = cli(*args, "--force")
    assert code == 0, err


def test_recipe_from_an_extracted_copy_and_from_the_archive_path(
    shared: Path, env: Path, cli
) -> None:
    base, checksums, expect = recipe_mirrors.librispeech(shared, env / "mirror")
    archive = base / "resources" / "12" / "test-clean.tar.gz"
    code, _, err = cli(
        "import",
        "librispeech-test-clean",
        "--from",
        archive,
        "--id",
        "a",
        "--checksum",
        checksums[0],
    )
    assert code == 0, err
    code, _, err = cli(
        "import",
        "librispeech-test-clean",
        "--from",
        shared / "data" / "librispeech-test-clean-sample",
        "--id",
        "b",
    )
    assert code == 0, err
    a, b = load_dataset(env / "datasets" / "a"), load_dataset(env / "datasets" / "b")
    assert [(u.id, u.text, u.duration) for u in a] == [(u.id, u.text, u.duration) for u in b]
    assert {u.extra["GENDER"] for u in a} == {"M"}  # from SPEAKERS.TXT, in the archive only


def test_the_official_checksum_refuses_a_mirror_that_differs(shared: Path, env: Path, cli) -> None:
    base, _, _ = recipe_mirrors.librispeech(shared, env / "mirror")
    code, _, err = cli("import", "librispeech-test-clean", "--from", base.as_uri(), "--id", "x")
    assert code == 1 and "does not match the published" in err
    assert "32fa31d27d2e1cad72775fee3f4849a9" in err or "39fde525" in err
    assert not (env / "datasets" / "x").exists()
    assert not list((env / "cache" / "downloads").rglob("*.tar.gz*")), "bad archive kept"


def test_recipes_without_a_public_download_say_how_to_get_the_data(env: Path, cli) -> None:
    for name in ("commonvoice", "gigaspeech-test"):
        code, _, err = cli("import", name, "--id", "x")
        assert code == 2 and "--from" in err and "no public download" in err
