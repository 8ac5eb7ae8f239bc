"""`ops/import earnings-nlp` (asrbench/importers/earnings_nlp.py): Rev's NLP references,
sidecars and system outputs from a checkout of speech-datasets, scored by `ops/score` as
they land. The checkout is built from the Earnings-21/22 excerpts in tests/fixtures."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from asrbench.settings import REPO_ROOT

FIX = REPO_ROOT / "tests" / "fixtures"
E22_ID = "2020-03-0230487MTN-Ghana-2019-Annual-Results-Call"


def _checkout(root: Path) -> Path:
    """A speech-datasets checkout holding the fixtures at Rev's paths."""
    t21 = root / "earnings21" / "transcripts"
    for sub, name in [
        ("nlp_references", "4320211.nlp"),
        ("normalizations", "4320211.norm.json"),
        ("wer_tags", "4320211.wer_tag.json"),
    ]:
        (t21 / sub).mkdir(parents=True)
        shutil.copy(FIX / "earnings21" / name, t21 / sub / name)
    google = root / "earnings21" / "output" / "rev" / "kaldi" / "nlp"
    google.mkdir(parents=True)
    shutil.copy(FIX / "earnings21" / "google" / "4320211.nlp", google / "4320211.nlp")
    t22 = root / "earnings22" / "transcripts"
    for sub, name in [
        ("nlp_references", f"{E22_ID}.nlp"),
        ("normalizations", f"{E22_ID}.norm.json"),
    ]:
        (t22 / sub).mkdir(parents=True)
        shutil.copy(FIX / "earnings22" / name, t22 / sub / name)
    return root


def test_earnings21_lands_as_ops_score_reads_it(cli, tmp_path: Path) -> None:
    src, out = _checkout(tmp_path / "speech-datasets"), tmp_path / "e21"
    code, stdout, err = cli("import", "earnings-nlp", "--from", src, "--out", out, "--systems")
    assert code == 0, err
    assert (
        "imported 1 calls (1 normalisation and 1 wer_tags sidecars, outputs of 1 systems)" in stdout
    )
    assert (out / "output" / "rev" / "kaldi" / "4320211.nlp").is_file()  # the nlp/ level dropped
    assert "CC BY-SA 4.0" in (out / "README.md").read_text(encoding="utf-8")
    code, _, err = cli(
        "score", out / "references", out / "output" / "rev" / "kaldi", "--norm",
        out / "normalizations", "--wer-tags", out / "wer_tags", "--no-nsw", "--out", tmp_path / "s",
    )  # fmt: skip
    assert code == 0, err
    summary = json.loads((tmp_path / "s" / "summary.json").read_text(encoding="utf-8"))
    assert summary["selection"]["n_utts"] == 1
    assert set(summary["entities"]["classes"]) >= {"ORG", "YEAR", "WEBSITE"}


def test_earnings22_has_prepunctuation_and_no_wer_tags(cli, tmp_path: Path) -> None:
    src, out = _checkout(tmp_path / "speech-datasets"), tmp_path / "e22"
    code, stdout, err = cli("import", "earnings-nlp", "--from", src, "--corpus", "earnings22",
                            "--out", out)  # fmt: skip
    assert code == 0, err
    assert "(1 normalisation and 0 wer_tags sidecars)" in stdout
    ref = out / "references" / f"{E22_ID}.nlp"
    # NSW on: the written "2019" is read as the reference's "twenty nineteen"
    code, _, err = cli("score", ref, ref, "--norm", out / "normalizations", "--out", tmp_path / "s")
    assert code == 0, err
    summary = json.loads((tmp_path / "s" / "summary.json").read_text(encoding="utf-8"))
    assert summary["metrics"]["errors"] == 0
    assert summary["entities"]["classes"]  # the classes of the tags column


def test_a_folder_without_the_corpus_is_one_line(cli, tmp_path: Path) -> None:
    code, _, err = cli("import", "earnings-nlp", "--from", tmp_path, "--out", tmp_path / "o")
    assert code == 2
    assert f"--from {tmp_path}: no earnings21/transcripts/nlp_references inside" in err
    assert len(err.strip().splitlines()) == 1
