"""One metric protocol (issue 40, item 3): one additive counts type pools utterances, sessions
and fairness groups; corpus rates and session metrics are registered once, and a rate
registered there reaches summary.json without touching anything else."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from scoring import Scorer, ScorerConfig
from scoring.errors import ScoringError
from scoring.meeting import SESSION_METRICS, SessionScore, pooled_sessions, score_sessions
from scoring.metrics import (
    RATES,
    Counts,
    Metrics,
    Rate,
    group_rates,
    pooled,
    rate_label,
    register_rate,
)
from scoring.segments import Segment

REFS = {"a": "the cat sat on the mat", "b": "hello world", "c": "", "d": "one two three"}
HYPS = {"a": "the cat sat on a mat", "b": "", "c": "noise", "d": "one two three four"}


@pytest.fixture(scope="module")
def utts():
    return Scorer(ScorerConfig(bootstrap=0)).utterances(REFS, HYPS)


def test_counts_add_like_meeteval_error_rate(utts) -> None:
    parts = [u.counts for u in utts]
    total = sum(parts)
    assert isinstance(total, Counts)
    assert total == parts[0] + parts[1] + parts[2] + parts[3] == Counts.total(parts)
    # pooling two halves and adding them is pooling the whole
    assert pooled(utts[:2]).counts + pooled(utts[2:]).counts == pooled(utts).counts
    assert total.rate == pooled(utts).ter == total.errors / total.n_ref
    assert Counts().rate is None and sum([], Counts()) == Counts()


def test_metrics_is_its_counts_plus_unit(utts) -> None:
    m = pooled(utts, "char")
    assert Metrics.from_counts("char", m.counts) == m
    # every registered rate of the pooled counts is the stored one
    stored = m.to_dict()
    assert {k: stored[k] for k in RATES} == {k: r.of(m.counts) for k, r in RATES.items()}


def test_rates_are_named_and_offered_from_the_registry() -> None:
    # TER takes the unit's name; fairness offers the rates that pool over any subset
    assert [rate_label("ter", u) for u in ("word", "char", "mixed")] == ["WER", "CER", "TER"]
    assert rate_label("mter_utt", "word") == "mTER_utt"
    assert group_rates() == ("ter", "mter_utt")


def test_sessions_pool_through_the_same_counts() -> None:
    sessions = [
        SessionScore("s1", 3, 10, 10, 1, 1, 1),
        SessionScore("s2", 0, 4, 4, 0, 0, 0),
        SessionScore("s3", 5, 5, 0, 0, 5, 0),  # nothing hypothesised: missing
    ]
    met = pooled_sessions(sessions, "word", ScorerConfig(bootstrap=0))
    want = Counts(3, 19, 14, 12, 1, 1, 6, 2, 19, 1, 0, 0)
    assert met.counts == sum(s.counts for s in sessions) == want


def _seg(session: str, speaker: str, start: float, words: str) -> Segment:
    return Segment(session, speaker, start, start + 1.0, words)


def test_session_metrics_come_from_their_registry() -> None:
    assert tuple(SESSION_METRICS) == ("wer", "cpwer", "tcpwer", "orcwer", "tcorcwer")
    refs = [_seg("s", "A", 0.0, "good morning"), _seg("s", "B", 1.0, "hi there")]
    hyps = [_seg("s", "x", 0.0, "good morning"), _seg("s", "y", 1.0, "hi")]
    scorer = Scorer(ScorerConfig(bootstrap=0))
    for name, how in SESSION_METRICS.items():
        result = score_sessions(scorer, refs, hyps, name)
        assert result.metrics.errors == 1, name
        assert (result.collar is not None) == how.collar
    with pytest.raises(ScoringError, match="one of wer, cpwer, tcpwer, orcwer, tcorcwer"):
        score_sessions(scorer, refs, hyps, "xwer")


@pytest.fixture
def toy_rate() -> Iterator[Rate]:
    rate = Rate("toy_ins_rate", "InsR", lambda c: c.ins / c.n_ref if c.n_ref else None)
    register_rate(rate)
    try:
        yield rate
    finally:
        del RATES[rate.key]


def test_a_registered_rate_reaches_summary_json(cli, tmp_path: Path, toy_rate: Rate) -> None:
    ref, hyp = tmp_path / "ref.tsv", tmp_path / "hyp.tsv"
    ref.write_text("".join(f"{k}\t{v}\n" for k, v in REFS.items()), encoding="utf-8")
    hyp.write_text("".join(f"{k}\t{v}\n" for k, v in HYPS.items()), encoding="utf-8")
    rc, _, err = cli("score", ref, hyp, "-o", tmp_path / "o", "--reports", "none")
    assert rc == 0, err
    metrics = json.loads((tmp_path / "o" / "summary.json").read_text())["metrics"]
    assert metrics["toy_ins_rate"] == metrics["ins"] / metrics["n_ref"]
    with pytest.raises(ValueError, match="already registered"):
        register_rate(toy_rate)
