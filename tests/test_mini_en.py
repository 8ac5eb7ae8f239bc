"""The corrected embedded default (issue 39, item 1): mini_en's two wrong references fixed,
the change stated in its card (`changes:`, schema-checked), and the sets built from its rows
carrying the same text."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from asrbench.dataset import load_dataset, validate
from asrbench.settings import REPO_ROOT

DATASETS = REPO_ROOT / "datasets"
A0009 = "I'm playing a single hand in what looks like a losing game."
LJ001_0024 = (
    "But the first Bible actually dated, which also was printed at Maintz by Peter Schoeffer "
    "in the year 1462."
)


def test_the_two_references_are_the_corrected_ones(mini_en: Path) -> None:
    refs = {u.id: u.text for u in load_dataset(mini_en, check_audio=False)}
    assert refs["arctic_a0010"] == A0009
    assert refs["LJ001-0024"] == LJ001_0024


def test_the_card_states_the_change_and_the_hash_moved(mini_en: Path) -> None:
    card = yaml.safe_load((mini_en / "dataset.yaml").read_text(encoding="utf-8"))
    (change,) = card["changes"]
    assert change["date"] == "2026-11-29" and "a0009" in change["what"]
    ds = load_dataset(mini_en)
    assert change["previous_hash"].startswith("sha256:")
    assert change["previous_hash"] != ds.content_hash()
    problems = validate(mini_en, check_audio=False)
    assert not [p for p in problems if p.severity == "error" or p.code == "unknown-key"]


def test_a_changes_entry_with_an_unknown_key_is_a_schema_error(
    mini_en: Path, tmp_path: Path
) -> None:
    root = tmp_path / "ds"
    (root / "audio").mkdir(parents=True)
    (root / "audio" / "jfk.wav").write_bytes((mini_en / "audio" / "jfk.wav").read_bytes())
    (root / "metadata.tsv").write_text("ID\tAUDIO\tDURATION\tTEXT\njfk\taudio/jfk.wav\t11.0\tx\n")
    (root / "dataset.yaml").write_text(
        "language: en\nchanges:\n  - {date: '2026-11-29', what: a, why: b, reason: c}\n"
    )
    problems = [p for p in validate(root, check_audio=False) if p.code == "schema"]
    assert problems and "reason" in problems[0].message


def test_the_sets_built_from_mini_en_carry_the_whole_sentence() -> None:
    for name, session in (("mini_long_en", "lj_reading"), ("mini_meeting_en", "meet_lj_austen")):
        segs = json.loads((DATASETS / name / "segments.seglst.json").read_text(encoding="utf-8"))
        words = [s["words"] for s in segs if s["session_id"] == session]
        assert any(w == LJ001_0024 for w in words), name
        assert not any(w == "But the first Bible actually dated" for w in words), name
        text = {u.id: u.text for u in load_dataset(DATASETS / name, check_audio=False)}[session]
        assert LJ001_0024 in text, name
