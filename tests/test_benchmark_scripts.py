"""Every script under benchmarks/ still imports and parses its options against today's library
(a renamed module or function breaks a benchmark silently otherwise: nothing else runs them)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from asrbench.settings import REPO_ROOT

SCRIPTS = sorted((REPO_ROOT / "benchmarks").glob("*.py"))


@pytest.mark.parametrize("script", SCRIPTS, ids=[p.name for p in SCRIPTS])
def test_benchmark_script_starts(script) -> None:
    proc = subprocess.run(
        [sys.executable, str(script), "--help"],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "usage:" in proc.stdout


def _sbs_row(ref: str | None, hyp: str | None, err: bool) -> str:
    """One row of fstalign's `--output-sbs` table, padded as fstalign writes it."""
    return f"{ref or '<ins>':>20}\t{hyp or '<del>':<20}\t{'ERR' if err else ''}\t\t"


def test_fstalign_places_finds_and_names_each_place(tmp_path) -> None:
    """A planted call: fstalign's alignment (as `--output-sbs` writes it) against the
    platform's ops, with a path that is not minimal, a hyphen split, a tie placed the other way
    (the same errors: no place) and fstalign's last-word rule."""
    anchor = [("a", "a", False), ("b", "b", False), ("c", "c", False)]
    fst = [
        (None, "there", True), ("there's", "there's", False), ("there's", None, True), *anchor,
        ("long", None, True), ("term", "longterm", True), *anchor,
        ("and", "and", False), ("and", None, True), ("costs", "costs", False), *anchor,
        ("the", "the", False), (None, "color", True), ("colour", None, True),
    ]  # fmt: skip
    mine = [
        ("S", "there's", "there"), ("C", "there's", "there's"), *[("C", w, w) for w in "abc"],
        ("S", "long-term", "longterm"), *[("C", w, w) for w in "abc"],
        ("D", "and", None), ("C", "and", "and"), ("C", "costs", "costs"),
        *[("C", w, w) for w in "abc"], ("C", "the", "the"), ("S", "colour", "color"),
    ]  # fmt: skip
    sbs = tmp_path / "sbs"
    sbs.mkdir()
    lines = ["ref_token\thyp_token\tIsErr\tClass\tWer_Tag_Entities"]
    lines += [_sbs_row(*row) for row in fst] + ["-" * 60, "Line\tGroup"]
    (sbs / "c1.sbs.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    utterances = tmp_path / "utterances.jsonl"
    utterances.write_text(json.dumps({"id": "c1", "ops": mine}) + "\n", encoding="utf-8")
    proc = subprocess.run(
        [sys.executable, "benchmarks/fstalign_places.py", "--sbs", str(sbs)]
        + ["--utterances", str(utterances)],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    assert (
        "| c1 | 7 | 4 | -3 | hyphen, fstalign split 1 (-1), last word 1 (-1), "
        "not minimal 1 (-1) |" in proc.stdout
    )
    assert "| c1 | 0 | not minimal | 2 / 1 | */there there's there's/* a b c |" in proc.stdout
    assert "and/*" not in proc.stdout  # the tie: as many errors either way


def test_fstalign_compare_pairs_names_a_bad_line(tmp_path) -> None:
    pairs = tmp_path / "pairs.txt"
    pairs.write_text("a b | a c\n\nno bar here\n", encoding="utf-8")
    proc = subprocess.run(
        [sys.executable, "benchmarks/fstalign_compare.py", "--pairs", str(pairs)]
        + ["--fstalign", sys.executable],  # any file: the lines are read before it runs
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 2
    assert proc.stderr.strip() == f"{pairs}:3: write one pair a line as `REF | HYP`"
