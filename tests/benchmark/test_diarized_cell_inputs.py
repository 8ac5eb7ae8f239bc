"""Bad input to a diarized benchmark cell (docs/SCORING.md, "Bad input, decided"; the same
through `ops/score --metric der` is tests/scoring/test_diarization.py's): a diarizer whose
turns of one speaker overlap each other, one naming 40 speakers, one that heard no speech in
a recording, and datasets whose reference has a speaker overlapping itself or a recording
with no speech. Each is a documented score or a one-line error, never a failed cell.

The diarizers are canned stand-ins (tests/benchmark/conftest.py) answering from
mini_meeting_en's reference turns under labels of their own.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from asrbench.resolve import resolve_dataset
from tests.benchmark.conftest import make_canned_model

DATASET = "mini_meeting_en"
SILENT = "meet_fsdd_readback"  # the recording the "deaf" diarizer hears nothing in


def _turns() -> dict[str, list]:
    out: dict[str, list] = {}
    for seg in sorted(resolve_dataset(DATASET).segments, key=lambda s: s.start_time):
        out.setdefault(seg.session_id, []).append(seg)
    return out


def _answer(segments: list[dict]) -> dict:
    return {"text": "", "segments": segments}


def _self_overlapping() -> dict[str, dict]:
    """Every reference turn, and inside it a second turn of the same speaker (10 % in from
    each end): merged, it is the turn itself, so DER 0."""
    out = {}
    for sid, turns in _turns().items():
        segs = []
        for t in turns:
            cut = 0.1 * (t.end_time - t.start_time)
            for a, b in ((t.start_time, t.end_time), (t.start_time + cut, t.end_time - cut)):
                segs.append({"start": a, "end": b, "text": "", "speaker": f"x_{t.speaker}"})
        out[sid] = _answer(segs)
    return out


def _forty() -> dict[str, dict]:
    """Each session's speech cut into 40 turns, each its own speaker."""
    out = {}
    for sid, turns in _turns().items():
        a, b = turns[0].start_time, max(t.end_time for t in turns)
        step = (b - a) / 40
        segs = [
            {"start": a + k * step, "end": a + (k + 1) * step, "text": "", "speaker": f"h{k:02d}"}
            for k in range(40)
        ]
        out[sid] = _answer(segs)
    return out


def _deaf() -> dict[str, dict]:
    """The reference's turns renamed, except in SILENT: no turn at all."""
    return {
        sid: _answer(
            []
            if sid == SILENT
            else [
                {"start": t.start_time, "end": t.end_time, "text": "", "speaker": f"x_{t.speaker}"}
                for t in turns
            ]
        )
        for sid, turns in _turns().items()
    }


def _bench(cli, tmp_path: Path, model: str | Path, dataset: str | Path = DATASET):
    return cli(
        "benchmark", "-m", model, "-d", dataset, "--runner", "local",
        "--results", tmp_path / "results", "--cache", tmp_path / "hyps",
        "--score-opt", "nsw=false", "--no-progress",
    )  # fmt: skip


def _sessions(tmp_path: Path, name: str) -> dict:
    path = tmp_path / "results" / name / DATASET / "summary.json"
    return json.loads(path.read_text())["session_metrics"]


def _score_exported(cli, tmp_path: Path, name: str) -> dict:
    """`ops/score --metric der` on the cell's exported turns against the exported reference."""
    ref, hyp = tmp_path / "ref", tmp_path / "hyp"
    assert cli("export", DATASET, "--to", "seglst", "--out", ref)[0] == 0
    assert (
        cli("export", tmp_path / "results" / name / DATASET, "--to", "seglst", "--out", hyp)[0] == 0
    )
    code, _, err = cli(
        "score", ref / f"{DATASET}.seglst.json", hyp / "hyp.seglst.json",
        "--metric", "der", "--no-nsw", "--out", tmp_path / "score",
    )  # fmt: skip
    assert code == 0, err
    return json.loads((tmp_path / "score" / "summary.json").read_text())["session"]


def test_a_speaker_overlapping_itself_in_the_hypothesis_is_merged(cli, tmp_path: Path) -> None:
    diar = make_canned_model(tmp_path / "models", "overlapping", _self_overlapping())
    code, _, err = _bench(cli, tmp_path, diar)
    assert code == 0, err
    der = _sessions(tmp_path, "overlapping")["der"]
    assert der["der"] == 0.0 and der["speaker_count_error"] == 0.0


def test_forty_hypothesis_speakers_are_a_der_while_cpwer_says_why_not(cli, tmp_path) -> None:
    diar = make_canned_model(tmp_path / "models", "forty", _forty())
    code, out, err = _bench(cli, tmp_path, diar)
    assert code == 0, err
    sessions = _sessions(tmp_path, "forty")
    assert sessions["der"]["speaker_count_error"] == 38.0  # 40 against 2, in each session
    # above 1: 38 unmapped speakers' time is confusion, and their turns span the pauses too
    assert sessions["der"]["der"] > 0.5
    assert "20" in sessions["cpwer"]["skipped"] and "cpWER not scored" in out
    assert sessions["der"] == _score_exported(cli, tmp_path, "forty")


def test_a_recording_the_diarizer_heard_no_speech_in_is_all_missed(cli, tmp_path) -> None:
    diar = make_canned_model(tmp_path / "models", "deaf", _deaf())
    code, _, err = _bench(cli, tmp_path, diar)
    assert code == 0, err
    der = _sessions(tmp_path, "deaf")["der"]
    silent_s = sum(t.end_time - t.start_time for t in _turns()[SILENT])
    assert der["missed"] == pytest.approx(silent_s) and der["false_alarm"] == 0.0
    assert der["confusion"] == 0.0 and der["undefined_sessions"] == 0
    assert der == _score_exported(cli, tmp_path, "deaf")


def _copy(tmp_path: Path) -> Path:
    folder = tmp_path / "data" / DATASET
    shutil.copytree(resolve_dataset(DATASET).root, folder)
    return folder


def test_a_reference_speaker_overlapping_itself_is_one_line(cli, tmp_path: Path) -> None:
    folder = _copy(tmp_path)
    path = folder / "segments.seglst.json"
    segs = json.loads(path.read_text())
    segs.insert(1, {**segs[0], "start_time": segs[0]["start_time"] + 2, "words": "hello"})
    path.write_text(json.dumps(segs))
    diar = make_canned_model(tmp_path / "models", "deaf", _deaf())
    code, _, err = _bench(cli, tmp_path, diar, folder)
    assert code == 2
    assert "overlaps itself" in err and "merge or split the segments" in err
    assert len(err.strip().splitlines()) <= 2 and "Traceback" not in err


def test_a_recording_with_no_speech_in_the_reference_is_one_line(cli, tmp_path) -> None:
    folder = _copy(tmp_path)
    sf.write(folder / "audio" / "silent.wav", np.zeros(16000 * 3, np.int16), 16000)
    with (folder / "metadata.tsv").open("a") as f:
        f.write("silent\taudio/silent.wav\t3.000\t\t\t\n")
    diar = make_canned_model(tmp_path / "models", "deaf", _deaf())
    code, _, err = _bench(cli, tmp_path, diar, folder)
    assert code == 2
    assert "session 'silent' has no reference words" in err and "Traceback" not in err
