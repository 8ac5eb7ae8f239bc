"""Per-speaker WER from cpWER's and tcpWER's speaker pairs (scoring.meeting.speaker_rates,
summary.json `session.per_speaker`): each reference speaker's errors over its words, pooled
over the sessions it speaks in, with an interval resampling those sessions."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from asrbench.longform.segments import write_timed
from scoring import Scorer, ScorerConfig
from scoring.meeting import score_sessions, speaker_rates
from scoring.segments import Segment


@pytest.fixture(scope="module")
def scorer() -> Scorer:
    return Scorer(ScorerConfig(nsw=False, bootstrap=200))


def seg(sid: str, spk: str, start: float, end: float, words: str) -> Segment:
    return Segment(sid, spk, start, end, words)


# A speaks in both sessions (1 error of 5 words, then 0 of 4), B in s1 only (1 error of 2),
# C in s2 only and missed by the system (3 deletions of 3).
REF = [
    seg("s1", "A", 0.0, 2.0, "good morning every one"),
    seg("s1", "B", 2.0, 3.0, "hello there"),
    seg("s1", "A", 3.0, 4.0, "today"),
    seg("s2", "A", 0.0, 2.0, "let us begin now"),
    seg("s2", "C", 2.0, 3.0, "yes of course"),
]
HYP = [
    seg("s1", "x", 0.0, 2.0, "good mourning every one"),
    seg("s1", "y", 2.0, 3.0, "hello"),
    seg("s1", "x", 3.0, 4.0, "today"),
    seg("s2", "x", 0.0, 2.0, "let us begin now"),
]
WANT = {"A": (1, 9, 2), "B": (1, 2, 1), "C": (3, 3, 1)}  # errors, words, sessions


@pytest.mark.parametrize("metric", ["cpwer", "tcpwer"])
def test_each_reference_speaker_gets_its_pairs_errors(scorer, metric: str) -> None:
    result = score_sessions(scorer, REF, HYP, metric)
    rates = speaker_rates(result.sessions, scorer.config)
    got = {k: (v["errors"], v["n_ref"], v["n_sessions"]) for k, v in rates.items()}
    assert got == WANT
    assert rates["A"]["rate"] == pytest.approx(1 / 9)
    # no unpaired hypothesis speaker here: the speakers' errors add up to the sessions'
    assert sum(v["errors"] for v in rates.values()) == sum(s.errors for s in result.sessions)


def test_interval_resamples_the_sessions_a_speaker_is_in(scorer) -> None:
    rates = speaker_rates(score_sessions(scorer, REF, HYP, "cpwer").sessions, scorer.config)
    a, b = rates["A"]["ci"], rates["B"]["ci"]
    # A: sessions at 1/5 and 0/4 -> replicates 0, 1/9 or 1/5
    assert a["low"] == pytest.approx(0.0) and a["high"] == pytest.approx(0.2)
    assert b["low"] == b["high"] == pytest.approx(0.5)  # one session: a point


def test_ops_score_writes_per_speaker(cli, tmp_path: Path) -> None:
    ref, hyp = tmp_path / "ref.seglst.json", tmp_path / "hyp.seglst.json"
    write_timed(ref, REF, "seglst")
    write_timed(hyp, HYP, "seglst")
    code, _, err = cli("score", ref, hyp, "--metric", "cpwer", "--no-nsw", "-o", tmp_path / "o")
    assert code == 0, err
    summary = json.loads((tmp_path / "o" / "summary.json").read_text())
    per = summary["session"]["per_speaker"]
    assert {k: (v["errors"], v["n_ref"]) for k, v in per.items()} == {
        k: w[:2] for k, w in WANT.items()
    }
    first = json.loads((tmp_path / "o" / "sessions.jsonl").read_text().splitlines()[0])
    assert first["speakers"] == [["A", 1, 5], ["B", 1, 2]]
