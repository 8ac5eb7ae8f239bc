"""Figures that reproduce (issue 39, item 3): doc tables rendered from stored results.

Every `<!-- figure:NAME -->` block of README.md and docs/*.md must equal its rendering from the
committed `docs/figures/NAME.json`, so a table cannot be edited by hand or drift from its data.
And the pipeline works on a real stored result: PocketSphinx (local runner) on three mini_en
utterances in a fresh results root, collected and rendered into a document with a marked block,
which then names this machine's CPU and x86-64 level, the commit and the command that ran.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from asrbench import figures
from asrbench.host import cpu_model, isa_level
from asrbench.settings import REPO_ROOT

SCRIPT = REPO_ROOT / "scripts" / "figures.py"
UTTS = ("LJ001-0024", "arctic_a0010", "jfk")  # the two corrected references and one more


def _script(*args: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(REPO_ROOT / ".venv" / "bin" / "python"), str(SCRIPT), *map(str, args)],
        capture_output=True,
        text=True,
        cwd=REPO_ROOT,
    )


def test_every_marked_block_equals_its_rendering() -> None:
    found = figures.blocks(figures.documents())
    names = {(b.path.relative_to(REPO_ROOT).as_posix(), b.name) for b in found}
    assert ("README.md", "mini_en_models") in names
    assert ("docs/MODELS.md", "mini_en_models") in names
    assert figures.stale(figures.documents()) == []
    p = _script("render", "--check")
    assert p.returncode == 0, p.stdout + p.stderr


def _three_utterances(mini_en: Path, out: Path) -> Path:
    """A real 3-utterance dataset: mini_en's rows and audio for UTTS."""
    (out / "audio").mkdir(parents=True)
    lines = (mini_en / "metadata.tsv").read_text(encoding="utf-8").splitlines(keepends=True)
    rows = [ln for ln in lines[1:] if ln.split("\t")[0] in UTTS]
    (out / "metadata.tsv").write_text(lines[0] + "".join(rows), encoding="utf-8")
    for uid in UTTS:
        shutil.copy(mini_en / "audio" / f"{uid}.wav", out / "audio" / f"{uid}.wav")
    (out / "dataset.yaml").write_text("id: mini3_en\nlanguage: en\nsample_rate: 16000\n")
    return out


@pytest.fixture(scope="module")
def stored(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("pocketsphinx")
    tmp = tmp_path_factory.mktemp("fig")
    data = _three_utterances(REPO_ROOT / "datasets" / "mini_en", tmp / "mini3_en")
    # a subprocess, as a user types it: run.json records this command line
    args = ["ops/benchmark", "-m", "pocketsphinx_en", "-d", data, "--runner", "local"]
    args += ["--no-progress", "--results", tmp / "results"]
    p = subprocess.run([str(a) for a in args], capture_output=True, text=True, cwd=REPO_ROOT)
    assert p.returncode == 0, p.stderr
    return tmp


def test_collect_and_render_name_the_machine_and_commit(stored: Path) -> None:
    results, figs = stored / "results", stored / "figures"
    p = _script("collect", "tiny", "-d", "mini3_en", "-m", "pocketsphinx_en",
                "--results", results, "--out", figs)  # fmt: skip
    assert p.returncode == 0, p.stderr
    data = json.loads((figs / "tiny.json").read_text())
    summary = json.loads((results / "pocketsphinx_en" / "mini3_en" / "summary.json").read_text())
    (row,) = data["rows"]
    assert row["wer"] == summary["metrics"]["ter"] and row["words"] == summary["metrics"]["n_ref"]
    head = subprocess.run(
        ["git", "rev-parse", "HEAD"], capture_output=True, text=True, cwd=REPO_ROOT, check=True
    ).stdout.strip()
    assert row["commit"] == head

    doc = stored / "docs" / "T.md"
    doc.parent.mkdir()
    doc.write_text("intro\n<!-- figure:tiny -->\nstale\n<!-- /figure -->\nend\n")
    assert _script("render", "--check", "--root", stored, "--figures", figs).returncode == 1
    p = _script("render", "--root", stored, "--figures", figs)
    assert p.returncode == 0 and "rewrote" in p.stdout, p.stderr
    text = doc.read_text()
    assert text.startswith("intro\n<!-- figure:tiny -->\n") and text.endswith(
        "<!-- /figure -->\nend\n"
    )
    assert "stale" not in text
    assert f"| pocketsphinx_en | {100 * row['wer']:.2f} |" in text
    assert f"{row['errors']} / {row['words']}" in text
    assert (
        f"Ran on {cpu_model()}, {isa_level() or 'unknown ISA'}" in text
        and f"commit {head[:12]}" in text
    )
    assert f"`ops/benchmark -m pocketsphinx_en -d {stored / 'mini3_en'} " in text  # what stored it
    assert "python scripts/figures.py collect tiny -d mini3_en" in text
    assert _script("render", "--check", "--root", stored, "--figures", figs).returncode == 0


def test_collect_without_a_stored_result_is_one_line(stored: Path) -> None:
    p = _script("collect", "x", "-d", "mini3_en", "-m", "whisper_base",
                "--results", stored / "results", "--out", stored / "figs2")  # fmt: skip
    assert p.returncode == 2 and "Traceback" not in p.stderr
    assert p.stderr.count("\n") == 1 and "run `ops/benchmark -m whisper_base" in p.stderr
