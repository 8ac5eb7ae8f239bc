"""Issue 39 item 5: `make setup` builds the NSW grammars (scripts/build_grammars.py), so the
first `ops/score` of a language only loads them. Japanese's grammar builds in about 2 s, so the
real build runs here; the datasets folder names one language nemo reads (ja) and two it does
not (ru: num2words; zh: no NSW), which need no grammar."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from asrbench.settings import REPO_ROOT

SCRIPT = [str(REPO_ROOT / "ops" / "_py"), str(REPO_ROOT / "scripts" / "build_grammars.py")]


def _run(cmd: list[str], env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, cwd=REPO_ROOT, env=env, capture_output=True, text=True, check=True)


def test_setup_builds_the_grammars_once_and_the_first_score_only_loads_them(
    tmp_path: Path,
) -> None:
    datasets = tmp_path / "datasets"
    for name, lang in (("a_ja", "ja"), ("b_ru", "ru"), ("c_zh", "zh-CN")):
        (datasets / name).mkdir(parents=True)
        (datasets / name / "dataset.yaml").write_text(f"id: {name}\nlanguage: {lang}\n")
    cache = tmp_path / "cache"
    env = {**os.environ, "ASRBENCH_CACHE": str(cache), "ASRBENCH_DATASETS_DIR": str(datasets)}

    first = _run(SCRIPT, env)
    assert "NSW grammars for ja: building" in first.stdout, first
    assert "NSW grammars for ja: built in" in first.stdout
    assert "ru" not in first.stdout and "zh" not in first.stdout

    (tmp_path / "ref.tsv").write_text("ID\tTEXT\nu1\t3\n", encoding="utf-8")
    (tmp_path / "hyp.tsv").write_text("ID\tTEXT\nu1\t4\n", encoding="utf-8")
    score = [str(REPO_ROOT / "ops" / "score"), str(tmp_path / "ref.tsv"), str(tmp_path / "hyp.tsv")]
    scored = _run([*score, "--lang", "ja", "-o", str(tmp_path / "out"), "--bootstrap", "0"], env)
    assert "building the NSW grammars" not in scored.stderr, scored.stderr

    again = _run(SCRIPT, env)
    assert again.stdout.strip() == f"NSW grammars for ja: built already ({cache / 'nemo_tn'})"


def test_setup_reads_the_embedded_references_ahead(tmp_path: Path) -> None:
    """After the grammars, the embedded sets' references of each language go through the
    default pipeline once: their NSW readings are in the result cache (Italian's tagger takes
    about 0.2 s per text with a number, which the first ops/score then no longer pays)."""
    import shutil
    import sqlite3

    datasets = tmp_path / "datasets"
    shutil.copytree(REPO_ROOT / "datasets" / "mini_it", datasets / "mini_it")
    cache = tmp_path / "cache"
    cache.mkdir()
    built = REPO_ROOT / ".cache" / "nemo_tn"
    if (built / "it").exists() or any(built.glob("*it*")):
        (cache / "nemo_tn").symlink_to(built)  # the checkout's grammars: no 46-s build here
    env = {**os.environ, "ASRBENCH_CACHE": str(cache), "ASRBENCH_DATASETS_DIR": str(datasets)}

    out = _run(SCRIPT, env).stdout
    n = sum(1 for line in (datasets / "mini_it" / "metadata.tsv").open() if line.strip()) - 1
    assert f"NSW readings of {n} embedded it references: cached" in out, out
    with sqlite3.connect(cache / "nsw_results.sqlite") as con:
        sources = {src for (src,) in con.execute("SELECT src FROM nsw")}
    # the texts with a number were read by nemo and stored (mini_it has 8 of them)
    assert any(any(c.isdigit() for c in src) for src in sources), sources

    again = _run(SCRIPT, env).stdout
    assert f"NSW readings of {n} embedded it references: cached" in again
