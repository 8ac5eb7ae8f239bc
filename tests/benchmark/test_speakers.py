"""`-m ASR+DIARIZER`: an ASR model's words given a diarizer's speakers by time overlap
(asrbench/benchmark/speakers.py), through the real CLI in-process and the local runner.

The models are canned stand-ins (tests/benchmark/conftest.py): an ASR that answers
mini_meeting_en's reference turns without speakers, one whole segment per turn pair (so a
segment holds two speakers' words and only estimated word times can split it), and diarizers
that answer the reference's turns with labels of their own and no words. The real diarizer and
Whisper are tests/models/test_resemblyzer_diar.py's.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from asrbench.benchmark.speakers import UNATTRIBUTED, attribute, speaker_at
from asrbench.resolve import resolve_dataset
from tests.benchmark.conftest import make_canned_model

DATASET = "mini_meeting_en"


def _turns() -> dict[str, list]:
    out: dict[str, list] = {}
    for seg in sorted(resolve_dataset(DATASET).segments, key=lambda s: s.start_time):
        out.setdefault(seg.session_id, []).append(seg)
    return out


def _asr_answers() -> dict[str, dict]:
    """Each pair of consecutive reference turns as one segment without a speaker."""
    answers = {}
    for sid, turns in _turns().items():
        segments = [
            {
                "start": pair[0].start_time,
                "end": pair[-1].end_time,
                "text": " ".join(t.words for t in pair),
            }
            for pair in (turns[n : n + 2] for n in range(0, len(turns), 2))
        ]
        answers[sid] = {"text": " ".join(s["text"] for s in segments), "segments": segments}
    return answers


def _diarizer_answers(prefix: str) -> dict[str, dict]:
    """The reference's turns, speakers renamed, no words (as a diarizer writes them)."""
    answers = {}
    for sid, turns in _turns().items():
        speakers = dict.fromkeys(t.speaker for t in turns)
        names = {spk: f"{prefix}{n}" for n, spk in enumerate(speakers)}
        segments = [
            {"start": t.start_time, "end": t.end_time, "text": "", "speaker": names[t.speaker]}
            for t in turns
        ]
        answers[sid] = {"text": "", "segments": segments}
    return answers


def test_a_word_takes_the_speaker_of_the_turn_it_overlaps_most() -> None:
    turns = [(0.0, 2.0, "a"), (1.5, 4.0, "b"), (6.0, 7.0, "c")]
    assert speaker_at(0.2, 0.8, turns) == "a"
    assert speaker_at(1.6, 2.4, turns) == "b"  # 0.4 s with a, 0.8 s with b
    assert speaker_at(4.5, 4.8, turns) == "b"  # no overlap: the nearest turn
    assert speaker_at(5.5, 5.8, turns) == "c"
    assert speaker_at(0.0, 1.0, []) == UNATTRIBUTED  # the diarizer heard no speech


def test_model_word_times_are_kept_and_grouped_into_speaker_segments() -> None:
    asr = {
        "id": "r",
        "segments": [{"start": 0.0, "end": 4.0, "text": "one two three"}],
        "words": [
            {"start": 0.0, "end": 1.0, "word": "one"},
            {"start": 1.0, "end": 2.0, "word": "two"},
            {"start": 3.0, "end": 4.0, "word": "three"},
        ],
    }
    diarized = {"segments": [{"start": 0, "end": 2.5, "text": "", "speaker": "x"},
                             {"start": 2.5, "end": 5, "text": "", "speaker": "y"}]}  # fmt: skip
    out = attribute(asr, diarized)
    assert [w["speaker"] for w in out["words"]] == ["x", "x", "y"]
    assert out["segments"] == [
        {"start": 0.0, "end": 2.0, "text": "one two", "speaker": "x"},
        {"start": 3.0, "end": 4.0, "text": "three", "speaker": "y"},
    ]


def test_a_segment_without_word_times_is_split_at_estimated_word_times() -> None:
    asr = {"id": "r", "segments": [{"start": 0.0, "end": 4.0, "text": "aa bb cc dd"}]}
    diarized = {"segments": [{"start": 0, "end": 2, "text": "", "speaker": "x"},
                             {"start": 2, "end": 4, "text": "", "speaker": "y"}]}  # fmt: skip
    out = attribute(asr, diarized)
    assert [(s["text"], s["speaker"]) for s in out["segments"]] == [("aa bb", "x"), ("cc dd", "y")]
    assert out["words"] == []  # estimated times are not the model's word times


def _bench(cli, tmp_path: Path, model: str) -> str:
    code, out, err = cli(
        "benchmark", "-m", model, "-d", DATASET, "--runner", "local",
        "--results", tmp_path / "results", "--cache", tmp_path / "hyps",
        "--score-opt", "nsw=false", "--no-progress",
    )  # fmt: skip
    assert code == 0, err
    return out


def _json(path: Path) -> dict:
    return json.loads(path.read_text())


def test_a_combined_cell_scores_cpwer_equal_to_ops_score_and_reuses_the_asr(
    cli, tmp_path: Path
) -> None:
    models = tmp_path / "models"
    asr = make_canned_model(models, "canned_asr", _asr_answers())
    diar_a = make_canned_model(models, "canned_diar_a", _diarizer_answers("a"))
    diar_b = make_canned_model(models, "canned_diar_b", _diarizer_answers("b"))
    out = _bench(cli, tmp_path, f"{asr}+{diar_a}")
    cell = tmp_path / "results" / "canned_asr+canned_diar_a" / DATASET
    summary = _json(cell / "summary.json")
    assert summary["model"] == "canned_asr+canned_diar_a"
    sessions = summary["session_metrics"]
    assert list(sessions) == ["cpwer", "der", "jer", "tcpwer"]
    assert f"cpWER {100 * sessions['cpwer']['metrics']['ter']:.2f}%" in out
    # the ASR's text is the cell's: WER as the ASR's own; the speakers are the diarizer's
    assert summary["metrics"]["errors"] == 0
    assert sessions["cpwer"]["metrics"]["ter"] < 0.1  # estimated word times, exact turns
    ref, hyp = tmp_path / "ref", tmp_path / "hyp"
    assert cli("export", DATASET, "--to", "seglst", "--out", ref)[0] == 0
    assert cli("export", cell, "--to", "seglst", "--out", hyp)[0] == 0
    for metric in ("cpwer", "tcpwer"):
        code, _, err = cli(
            "score", ref / f"{DATASET}.seglst.json", hyp / "hyp.seglst.json",
            "--metric", metric, "--no-nsw", "--out", tmp_path / f"score-{metric}",
        )  # fmt: skip
        assert code == 0, err
        scored = _json(tmp_path / f"score-{metric}" / "summary.json")
        assert scored["metrics"] == sessions[metric]["metrics"]
    # the key names both stages; another diarizer runs only itself, the ASR comes from cache
    first = _json(cell / "run.json")["cache"]
    _bench(cli, tmp_path, f"{asr}+{diar_b}")
    second = _json(tmp_path / "results" / "canned_asr+canned_diar_b" / DATASET / "run.json")
    runtime = second["cache"]["inputs"]["runtime"]
    assert runtime["asr_hyps"] == first["inputs"]["runtime"]["asr_hyps"]
    assert runtime["diarizer_hyps"] != first["inputs"]["runtime"]["diarizer_hyps"]
    assert second["cache"]["utts_run"] == 2  # the two recordings, by the new diarizer only
    assert second["model"]["card"]["diarizer"]["id"] == "canned_diar_b"


@pytest.mark.parametrize("spec", ["a+", "+b", "a+b+c"])
def test_a_malformed_combination_is_one_line(cli, spec: str) -> None:
    code, _, err = cli("benchmark", "-m", spec, "-d", DATASET, "--no-progress")
    assert code == 2
    assert "ASR+DIARIZER" in err and "Traceback" not in err


def test_a_diarizer_cell_exports_its_turns_and_ops_score_gives_its_der(cli, tmp_path) -> None:
    """A diarizer alone (empty texts, speaker turns): its cell's DER and JER are those of
    `ops/score --metric der|jer` on its exported SegLST, which holds its turns."""
    diar = make_canned_model(tmp_path / "models", "canned_diar", _diarizer_answers("s"))
    out = _bench(cli, tmp_path, str(diar))
    cell = tmp_path / "results" / "canned_diar" / DATASET
    sessions = _json(cell / "summary.json")["session_metrics"]
    assert sessions["der"]["der"] == 0.0  # the reference's own turns
    assert "DER 0.00%" in out
    ref, hyp = tmp_path / "ref", tmp_path / "hyp"
    assert cli("export", DATASET, "--to", "seglst", "--out", ref)[0] == 0
    assert cli("export", cell, "--to", "seglst", "--out", hyp)[0] == 0
    exported = _json(hyp / "hyp.seglst.json")
    assert exported and all(s["words"] == "" and s["speaker"] for s in exported)
    for metric in ("der", "jer"):
        code, _, err = cli(
            "score", ref / f"{DATASET}.seglst.json", hyp / "hyp.seglst.json",
            "--metric", metric, "--no-nsw", "--out", tmp_path / f"score-{metric}",
        )  # fmt: skip
        assert code == 0, err
        assert _json(tmp_path / f"score-{metric}" / "summary.json")["session"] == sessions[metric]
