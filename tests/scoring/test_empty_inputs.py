"""Issue 30, low items of the scorer's inputs: an empty reference set, TSV lines read as trn."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from asrbench.settings import REPO_ROOT
from scoring.io import detect_format, read_transcripts

OPS_SCORE = REPO_ROOT / "ops" / "score"


def _run(*args: str | Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(OPS_SCORE), *map(str, args), "--bootstrap", "0"],
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )


@pytest.mark.parametrize("content", ["", "\n\n  \n"])
def test_empty_reference_file_is_an_input_error(tmp_path: Path, content: str) -> None:
    ref, hyp = tmp_path / "ref.tsv", tmp_path / "hyp.tsv"
    ref.write_text(content)
    hyp.write_text("")
    proc = _run(ref, hyp, "-o", tmp_path / "out")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    err = proc.stderr.strip()
    assert err.splitlines() == [err] and err.startswith(f"error: {ref}:")
    assert "no utterance" in err and not (tmp_path / "out" / "summary.json").exists()


def test_empty_but_present_pair_is_a_correct_utterance(tmp_path: Path) -> None:
    # An ID whose reference is empty and whose hypothesis is empty: nothing said, nothing
    # written, no error; its TER is undefined, its mTER 0 (docs/SCORING.md, Inputs).
    ref, hyp = tmp_path / "ref.tsv", tmp_path / "hyp.tsv"
    ref.write_text("a\t\nb\thello world\n")
    hyp.write_text("a\t\nb\thello world\n")
    proc = _run(ref, hyp, "-o", tmp_path / "out")
    assert proc.returncode == 0, proc.stderr
    m = json.loads((tmp_path / "out" / "summary.json").read_text())["metrics"]
    assert (m["errors"], m["n_empty_ref"], m["ter"], m["mter"]) == (0, 1, 0.0, 0.0)
    rows = [
        json.loads(x) for x in (tmp_path / "out" / "utterances.jsonl").read_text().split("\n") if x
    ]
    assert rows[0]["id"] == "a" and rows[0]["ter"] is None and rows[0]["mter"] == 0.0


@pytest.mark.parametrize(
    ("name", "content", "fmt"),
    [
        # TSV whose texts end in an annotation: tabs, and repeated word-like "IDs"
        ("h.txt", "u1\thello there (laughs)\nu2\tyes (laughs)\n", "tsv"),
        ("h.txt", "u1\thello there (laughs)\n", "tsv"),
        # Kaldi lines ending in annotations: the same word in parentheses on every line
        ("h.txt", "u1 hello there (laughs)\nu2 yes (laughs)\n", "kaldi"),
        ("h.txt", "u1 hello (noise)\n", "kaldi"),
        # sclite trn: distinct utterance-like IDs, no tab
        ("h.txt", "hello there (spk1-utt1)\nyes (spk1-utt2)\n", "trn"),
        ("h.txt", "hello there (utt1)\n", "trn"),
        ("h.trn", "hello there (laughs)\n", "trn"),  # the extension decides
    ],
)
def test_format_detection(tmp_path: Path, name: str, content: str, fmt: str) -> None:
    path = tmp_path / name
    path.write_text(content)
    assert detect_format(path) == fmt


def test_tsv_ending_in_an_annotation_scores_its_ids(tmp_path: Path) -> None:
    path = tmp_path / "hyp.txt"
    path.write_text("u1\thello there (laughs)\nu2\tyes (laughs)\n")
    assert read_transcripts(path) == {"u1": "hello there (laughs)", "u2": "yes (laughs)"}
