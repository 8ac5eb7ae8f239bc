"""A long-form cell reports the session metrics its hypothesis supports, by the one session
scorer of `ops/score --metric`: a speaker-attributed hypothesis cpWER and tcpWER, any other
ORC-WER and session WER; each equal to `ops/score` on the cell's exported SegLST against the
dataset's exported reference (the real CLI in-process, local runner, no Docker).

The model is the canned stand-in of tests/benchmark/conftest.py: mini_meeting_en's own
reference segments, altered as a system would get them wrong (words dropped, times moved, one
turn per session given to the other speaker), with or without speaker labels.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from asrbench.resolve import resolve_dataset
from tests.benchmark.conftest import make_canned_model

DATASET = "mini_meeting_en"
# each dataset speaker as the model names it: labels of its own, not the reference's
LABELS = {"LJ": "spk1", "austen": "spk2", "george": "spk1", "nicolas": "spk2"}
WRONG_TURN = 4  # the n-th turn of each session is given to the other speaker


def _answers(speakers: bool) -> dict[str, dict]:
    """mini_meeting_en's reference turns as a model's timed answer: every third turn loses its
    last word, every turn starts and ends 0.4 s late, one turn per session is attributed to
    the other speaker; hyp.tsv's text is the turns joined in time order."""
    answers: dict[str, dict] = {}
    for sid, turns in _by_session().items():
        segments = []
        for n, seg in enumerate(sorted(turns, key=lambda s: s.start_time)):
            words = seg.words.split()
            words = words[:-1] if n % 3 == 2 and len(words) > 1 else words
            label = LABELS[seg.speaker]
            if n == WRONG_TURN:
                label = "spk2" if label == "spk1" else "spk1"
            item = {"start": seg.start_time + 0.4, "end": seg.end_time + 0.4}
            item["text"] = " ".join(words)
            if speakers:
                item["speaker"] = label
            segments.append(item)
        answers[sid] = {"text": " ".join(s["text"] for s in segments), "segments": segments}
    return answers


def _by_session() -> dict[str, list]:
    out: dict[str, list] = {}
    for seg in resolve_dataset(DATASET).segments:
        out.setdefault(seg.session_id, []).append(seg)
    return out


def _bench(cli, tmp_path: Path, speakers: bool) -> tuple[str, Path]:
    name = "canned_speakers" if speakers else "canned_plain"
    model = make_canned_model(tmp_path / "models", name, _answers(speakers))
    code, out, err = cli(
        "benchmark", "-m", model, "-d", DATASET, "--runner", "local",
        "--results", tmp_path / "results", "--cache", tmp_path / "hyps",
        "--score-opt", "nsw=false", "--no-progress",
    )  # fmt: skip
    assert code == 0, err
    return out, tmp_path / "results" / name / DATASET


def _exported_score(cli, tmp_path: Path, cell: Path, fmt: str, metric: str) -> dict:
    """`ops/score --metric` on the cell's exported hypothesis against the exported reference."""
    ref_dir, hyp_dir = tmp_path / "ref", tmp_path / f"hyp-{fmt}"
    if not ref_dir.exists():
        assert cli("export", DATASET, "--to", "seglst", "--out", ref_dir)[0] == 0
    if not hyp_dir.exists():
        code, _, err = cli("export", cell, "--to", fmt, "--out", hyp_dir)
        assert code == 0, err
    hyp = hyp_dir / ("hyp.seglst.json" if fmt == "seglst" else "hyp.ctm")
    out = tmp_path / f"score-{fmt}-{metric}"
    code, _, err = cli(
        "score", ref_dir / f"{DATASET}.seglst.json", hyp, "--metric", metric, "--no-nsw",
        "--out", out,
    )  # fmt: skip
    assert code == 0, err
    return json.loads((out / "summary.json").read_text())


def _cell(cell: Path) -> dict:
    return json.loads((cell / "summary.json").read_text())


@pytest.mark.parametrize("metric", ["cpwer", "tcpwer"])
def test_speakers_give_cpwer_and_tcpwer_equal_to_ops_score(cli, tmp_path: Path, metric) -> None:
    out, cell = _bench(cli, tmp_path, speakers=True)
    summary = _cell(cell)
    sessions = summary["session_metrics"]
    # no ORC-WER or session WER for this one; who spoke when: DER and JER
    assert list(sessions) == ["cpwer", "der", "jer", "tcpwer"]  # as stored: keys sorted
    assert sessions["tcpwer"]["collar"] == 5.0 and sessions["cpwer"]["collar"] is None
    mine = sessions[metric]["metrics"]
    label = {"cpwer": "cpWER", "tcpwer": "tcpWER"}[metric]
    assert f"{label} {100 * mine['ter']:.2f}%" in out  # printed by ops/benchmark
    assert "ORC-WER" not in out
    scored = _exported_score(cli, tmp_path, cell, "seglst", metric)
    assert scored["session"]["metric"] == metric
    assert scored["metrics"] == mine  # counts, rates and the intervals over sessions
    # the turn given to the other speaker costs cpWER errors that WER does not count
    wer = _exported_score(cli, tmp_path, cell, "seglst", "wer")["metrics"]
    assert mine["errors"] > wer["errors"] > 0


@pytest.mark.parametrize("metric", ["der", "jer"])
def test_speakers_give_der_and_jer_equal_to_ops_score(cli, tmp_path: Path, metric) -> None:
    """DER and JER of the cell's turns: `ops/score --metric der|jer` (its default collar, the
    scorer's bootstrap) on the exported SegLST gives the same `session` object."""
    out, cell = _bench(cli, tmp_path, speakers=True)
    mine = _cell(cell)["session_metrics"][metric]
    assert mine["format"] == "asrbench-diarization-v1" and mine["collar"] == 0.0
    assert f"{metric.upper()} {100 * mine[metric]:.2f}%" in out  # printed by ops/benchmark
    assert _exported_score(cli, tmp_path, cell, "seglst", metric)["session"] == mine
    assert 0 < mine["der"] < 0.5  # one turn per session given to the other speaker, 0.4 s late


def test_without_speakers_orc_wer_and_session_wer_equal_to_ops_score(cli, tmp_path) -> None:
    out, cell = _bench(cli, tmp_path, speakers=False)
    summary = _cell(cell)
    sessions = summary["session_metrics"]
    assert list(sessions) == ["orcwer", "wer"]
    assert "cpWER" not in out and "tcpWER" not in out
    for metric, label in (("orcwer", "ORC-WER"), ("wer", "WER")):
        mine = sessions[metric]["metrics"]
        assert f"{label} {100 * mine['ter']:.2f}%" in out
        assert _exported_score(cli, tmp_path, cell, "seglst", metric)["metrics"] == mine
    # session WER is the cell's own WER (the same text, the same scorer): one number
    counts = ("errors", "n_ref", "n_hyp", "sub", "del", "ins")
    main, session = summary["metrics"], sessions["wer"]["metrics"]
    assert [main[k] for k in counts] == [session[k] for k in counts]
    # the CTM export (no speakers, word times) scores the same session WER
    ctm = _exported_score(cli, tmp_path, cell, "ctm", "wer")["metrics"]
    assert [ctm[k] for k in counts] == [session[k] for k in counts]


def test_an_utterance_dataset_has_no_session_metrics(cli, tmp_path: Path) -> None:
    """Only a long-form dataset's cell gets them: any other summary.json keeps its bytes."""
    model = make_canned_model(tmp_path / "models", "canned_short", {})
    code, _, err = cli(
        "benchmark", "-m", model, "-d", "mini_en", "--max-utts", "2", "--runner", "local",
        "--results", tmp_path / "results", "--cache", tmp_path / "hyps", "--no-progress",
    )  # fmt: skip
    assert code == 0, err
    cells = [p for p in (tmp_path / "results/canned_short").iterdir() if p.is_dir()]
    summary = json.loads((cells[0] / "summary.json").read_text())
    assert "session_metrics" not in summary
