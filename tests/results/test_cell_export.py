"""A result cell's hypothesis as SegLST or CTM (`ops/export CELL`), and the timed contract's
optional speaker that makes it speaker-attributed (asrbench/results/timed.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from asrbench.results.timed import TIMED_FILE, hyp_segments, read_hyp_timed, write_hyp_timed
from scoring.timed import read_ctm, read_seglst
from tests.benchmark.conftest import make_canned_model

SEGMENTS = [
    {"start": 0.5, "end": 2.0, "text": "good morning", "speaker": "A"},
    {"start": 2.5, "end": 3.0, "text": "hello", "speaker": "B"},
]


def test_a_speaker_is_kept_and_only_where_given(tmp_path: Path) -> None:
    path = tmp_path / TIMED_FILE
    lines = [
        {"id": "a", "segments": SEGMENTS},
        {"id": "b", "segments": [{"start": 0.0, "end": 1.0, "text": "plain"}]},
        {"id": "c", "segments": [{"start": 0.0, "end": 1.0, "text": "x", "speaker": 7}]},
    ]
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    timed, problems = read_hyp_timed(path)
    assert [s["speaker"] for s in timed["a"]["segments"]] == ["A", "B"]
    # a line without speakers reads (and is written back) as before: no speaker key at all
    assert timed["b"]["segments"] == [{"start": 0.0, "end": 1.0, "text": "plain"}]
    write_hyp_timed(tmp_path / "out.jsonl", {"b": timed["b"]})
    assert b'"speaker"' not in (tmp_path / "out.jsonl").read_bytes()
    # a speaker that is not a string is a contract problem, the line ignored
    assert "c" not in timed
    assert len(problems) == 1 and "line 3" in problems[0] and "speaker" in problems[0]


def test_segments_are_speaker_attributed_only_when_every_turn_names_one() -> None:
    hyps = {"a": "good morning hello", "b": "plain"}
    durations = {"a": 4.0, "b": 2.0}
    both = {"a": {"segments": SEGMENTS}, "b": {"segments": [{**SEGMENTS[1], "text": "plain"}]}}
    segs = hyp_segments(hyps, both, durations)
    assert [(s.session_id, s.speaker, s.words) for s in segs] == [
        ("a", "A", "good morning"),
        ("a", "B", "hello"),
        ("b", "B", "plain"),
    ]
    # one recording without speakers: the whole text of each recording, no speaker, as a
    # session spanning the recording (ORC-WER and session WER score the cell's own text)
    partial = {"a": both["a"], "b": {"segments": [{"start": 0.0, "end": 1.0, "text": "plain"}]}}
    segs = hyp_segments(hyps, partial, durations)
    assert [(s.session_id, s.speaker, s.start_time, s.end_time, s.words) for s in segs] == [
        ("a", "", 0.0, 4.0, "good morning hello"),
        ("b", "", 0.0, 2.0, "plain"),
    ]


@pytest.fixture
def cell(cli, tmp_path: Path) -> Path:
    """A mini_meeting_en cell of a model that answers with two speaker turns per recording."""
    answers = {
        sid: {"text": "good morning hello", "segments": SEGMENTS}
        for sid in ("meet_lj_austen", "meet_fsdd_readback")
    }
    model = make_canned_model(tmp_path / "models", "canned_two", answers)
    code, _, err = cli(
        "benchmark", "-m", model, "-d", "mini_meeting_en", "--runner", "local",
        "--results", tmp_path / "results", "--cache", tmp_path / "hyps", "--no-progress",
    )  # fmt: skip
    assert code == 0, err
    return tmp_path / "results" / "canned_two" / "mini_meeting_en"


def test_a_cell_exports_as_seglst_and_ctm(cli, cell: Path, tmp_path: Path) -> None:
    code, out, err = cli("export", cell, "--to", "seglst", "--out", tmp_path / "s")
    assert code == 0, err
    assert "hyp.seglst.json" in out
    segs = read_seglst(tmp_path / "s" / "hyp.seglst.json")
    assert [(s.session_id, s.speaker, s.start_time, s.words) for s in segs] == [
        (sid, seg["speaker"], seg["start"], seg["text"])
        for sid in ("meet_fsdd_readback", "meet_lj_austen")
        for seg in SEGMENTS
    ]
    code, _, err = cli("export", cell, "--to", "ctm", "--out", tmp_path / "c")
    assert code == 0, err
    words = read_ctm(tmp_path / "c" / "hyp.ctm")  # read back: in file and time order
    assert [w.word for w in words] == ["good", "morning", "hello"] * 2
    assert words[0].start_time == 0.5 and words[2].start_time == 2.5
    # an earlier export is replaced with --force, and only then
    code, _, err = cli("export", cell, "--to", "ctm", "--out", tmp_path / "c")
    assert code == 2 and "--force" in err
    assert cli("export", cell, "--to", "ctm", "--out", tmp_path / "c", "--force")[0] == 0


def test_a_cell_refuses_a_dataset_format_in_one_line(cli, cell: Path, tmp_path: Path) -> None:
    code, _, err = cli("export", cell, "--to", "kaldi", "--out", tmp_path / "k")
    assert code == 2
    assert "seglst or ctm" in err and "Traceback" not in err
    assert not (tmp_path / "k").exists()
