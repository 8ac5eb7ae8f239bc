"""`models/resemblyzer_diar` with its real weights (Resemblyzer's GE2E encoder, silero VAD) on
mini_meeting_en's real speech, through `ops/benchmark` (the real CLI in-process, local runner),
and combined with a real ASR model (`-m whisper_tiny_en+resemblyzer_diar`).

Both are `full`: the diarizer's first load compiles librosa's numba kernels (about 20 s of CPU,
minutes on a loaded two-core machine), and the pair runs Whisper on 279 s of audio.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from asrbench.resolve import resolve_dataset
from scoring.diarization import score_diarization
from scoring.segments import Segment

DATASET = "mini_meeting_en"
pytestmark = pytest.mark.full


def _bench(cli, tmp_path: Path, model: str) -> tuple[str, dict]:
    code, out, err = cli(
        "benchmark", "-m", model, "-d", DATASET, "--runner", "local",
        "--results", tmp_path / "results", "--cache", tmp_path / "hyps", "--no-progress",
    )  # fmt: skip
    assert code == 0, err
    cell = tmp_path / "results" / model / DATASET
    return out, json.loads((cell / "summary.json").read_text())


def _one_speaker_baseline() -> dict[str, float]:
    """Each session's DER when one speaker holds all its reference speech (every turn kept,
    relabelled): the diarizer must beat it wherever a session has two speakers."""
    refs = resolve_dataset(DATASET).segments
    hyp = [Segment(r.session_id, "one", r.start_time, r.end_time, "") for r in refs]
    return {s.session_id: s.der for s in score_diarization(refs, hyp).sessions}


def test_the_diarizer_beats_one_speaker_on_every_two_speaker_session(cli, tmp_path) -> None:
    out, summary = _bench(cli, tmp_path, "resemblyzer_diar")
    der = summary["session_metrics"]["der"]
    assert f"DER {100 * der['der']:.2f}%" in out
    refs = resolve_dataset(DATASET).segments
    cell = tmp_path / "results" / "resemblyzer_diar" / DATASET
    timed = [json.loads(line) for line in (cell / "hyp.timed.jsonl").read_text().splitlines()]
    hyp = [
        Segment(t["id"], s["speaker"], s["start"], s["end"], "")
        for t in timed
        for s in t["segments"]
    ]
    assert all(s["text"] == "" for t in timed for s in t["segments"])  # no words
    sessions = {s.session_id: s for s in score_diarization(refs, hyp).sessions}
    baseline = _one_speaker_baseline()
    for sid, scored in sessions.items():
        assert scored.ref_speakers == 2
        assert scored.der < baseline[sid], (sid, scored.der, baseline[sid])


def test_whisper_with_the_diarizer_scores_cpwer_beside_whispers_own_wer(cli, tmp_path) -> None:
    out, alone = _bench(cli, tmp_path, "whisper_tiny_en")
    out, pair = _bench(cli, tmp_path, "whisper_tiny_en+resemblyzer_diar")
    assert pair["metrics"] == alone["metrics"]  # the ASR's text, from its cache entry
    sessions = pair["session_metrics"]
    assert list(sessions) == ["cpwer", "der", "jer", "tcpwer"]
    cpwer = sessions["cpwer"]["metrics"]
    assert f"cpWER {100 * cpwer['ter']:.2f}%" in out
    # a speaker per word can only add errors to the ASR's own
    assert cpwer["errors"] >= alone["metrics"]["errors"]
