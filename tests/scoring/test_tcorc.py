"""Time-constrained ORC-WER (`--metric tcorcwer`, scoring/tcorc.py): MeetEval's `tcorcwer`
counts on seeded sessions, the least cost over every assignment on small ones (brute force),
the checkpointed walk back equal to one kept whole, the assignment reported as ORC-WER's, and
a clear refusal where a session is too large."""

from __future__ import annotations

import importlib.util
import itertools
import json
import random
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from asrbench.longform.segments import write_timed
from scoring import Scorer, ScorerConfig, tcorc
from scoring.align import align_timed
from scoring.errors import ScoringError
from scoring.meeting import MAX_COLLAR, score_sessions, sessions_table
from scoring.segments import Segment
from tests.scoring.test_meeting import _ops_score

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location(
    "longform_score", ROOT / "benchmarks" / "longform_score.py"
)
assert _spec is not None and _spec.loader is not None
longform = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(longform)


@pytest.fixture(scope="module")
def scorer() -> Scorer:
    return Scorer(ScorerConfig(nsw=False, dae=False, bootstrap=0))


def seg(spk: str, start: float, end: float, words: str, sid: str = "s1") -> Segment:
    return Segment(sid, spk, start, end, words)


# Two reference speakers, two hypothesis streams. By text alone "yes" (reference B, 10-11 s)
# would join stream y's "yes" at 30 s; in time (collar 5 s) only stream x's "no" is near it.
REF = [
    seg("A", 0.0, 2.0, "good morning everyone"),
    seg("B", 10.0, 11.0, "yes"),
    seg("A", 30.0, 32.0, "let us begin"),
]
HYP = [
    seg("x", 0.0, 2.0, "good morning everyone"),
    seg("x", 10.0, 11.0, "no"),
    seg("y", 30.0, 32.0, "yes let us begin"),
]


def test_hand_case_time_decides(scorer) -> None:
    (s,) = score_sessions(scorer, REF, HYP, "tcorcwer", collar=5.0).sessions
    # "yes" substituted by stream x's "no"; stream y's extra "yes" inserted (too far to match)
    assert (s.errors, s.sub, s.dele, s.ins, s.n_ref, s.n_hyp) == (2, 1, 0, 1, 7, 8)
    assert s.assignment == (("A@0", "x"), ("B@10", "x"), ("A@30", "y"))
    # a collar reaching 30 s: "yes" matches stream y's, then only stream x's "no" is left over
    (wide,) = score_sessions(scorer, REF, HYP, "tcorcwer", collar=25.0).sessions
    assert (wide.errors, wide.ins) == (1, 1)
    assert dict(wide.assignment)["B@10"] == "y"


def test_no_hypothesis_deletes_everything(scorer) -> None:
    res = score_sessions(scorer, REF, [], "tcorcwer")
    (s,) = res.sessions
    assert (s.errors, s.dele, s.n_ref, s.n_hyp) == (7, 7, 7, 0)
    assert {h for _, h in s.assignment} == {None}
    assert sessions_table(res).splitlines()[0] == "tcORC-WER (collar 5 s)"


def _normalised(scorer: Scorer, segs: list[Segment]) -> list[Segment]:
    return [replace(s, words=" ".join(scorer.normalize(s.words))) for s in segs]


@pytest.mark.parametrize("collar", [5.0, 0.5, 0.0])
def test_meeteval_parity(scorer, collar: float) -> None:
    """MeetEval's tcorcwer: the same errors and reference words per session, on the same
    tokens (seeded sessions of 2-4 speakers with overlapping turns; merged and extra
    hypothesis speakers; jittered times)."""
    meeteval = pytest.importorskip("meeteval")
    from meeteval.io import SegLST

    refs, hyps = longform.synthetic_corpus(seed=31, sessions=6, words=200, seconds=80.0)
    refs, hyps = _normalised(scorer, refs), _normalised(scorer, hyps)
    res = score_sessions(scorer, refs, hyps, "tcorcwer", collar=collar)
    got = {s.session_id: (s.errors, s.n_ref) for s in res.sessions}
    out = meeteval.wer.tcorcwer(
        SegLST([s.to_seglst() for s in refs]), SegLST([s.to_seglst() for s in hyps]), collar=collar
    )
    assert got == {sid: (er.errors, er.length) for sid, er in out.items()}
    assert all(e for e, _ in got.values())
    if collar == 5.0:  # not every word wrong; a tighter collar only forbids pairings
        assert sum(e for e, _ in got.values()) < 0.5 * sum(n for _, n in got.values())


def test_wide_collar_is_orc_wer(scorer) -> None:
    """A collar covering the whole session admits every pairing: exact ORC-WER's errors."""
    refs, hyps = longform.synthetic_corpus(seed=5, sessions=3, speakers=(2, 3), words=60)
    refs, hyps = _normalised(scorer, refs), _normalised(scorer, hyps)
    wide = score_sessions(scorer, refs, hyps, "tcorcwer", collar=MAX_COLLAR)
    orc = score_sessions(scorer, refs, hyps, "orcwer")
    assert [s.errors for s in wide.sessions] == [s.errors for s in orc.sessions]


def _random_case(rng: random.Random, n_utts: int, n_streams: int):
    utts, streams = [], []
    t = 0.0
    for _ in range(n_utts):
        n = rng.randint(1, 4)
        times = np.array([(t + 0.5 * i, t + 0.5 * i + 0.5) for i in range(n)])
        utts.append(tcorc.Words(np.array([rng.randrange(5) for _ in range(n)]), times))
        t += rng.uniform(0.0, 2.5)  # overlapping segments, and gaps
    for _ in range(n_streams):
        m = rng.randint(0, 8)
        starts = np.sort(np.array([rng.uniform(0, t + 2) for _ in range(m)]))
        collar = rng.choice([0.0, 0.3, 1.0])
        times = np.stack([starts - collar, starts + collar], axis=1).reshape(-1, 2)
        streams.append(tcorc.Words(np.array([rng.randrange(5) for _ in range(m)]), times))
    return utts, streams


def _cost(utts, streams, chosen, k: int) -> int:
    total = 0
    for s, h in enumerate(streams):
        mine = [u for u, c in zip(utts, chosen, strict=True) if c == s]
        ref = np.concatenate([u.ids for u in mine]) if mine else np.zeros(0, np.int64)
        times = np.concatenate([u.times for u in mine]) if mine else np.zeros((0, 2))
        total += align_timed(ref, times, h.ids, h.times, k, ops=False)[1]
    return total


@pytest.mark.parametrize("seed", range(40))
def test_least_cost_over_every_assignment(seed: int) -> None:
    """The DP's assignment costs (K*E + S, each stream aligned as tcpWER aligns) the least of
    all S^U assignments (segments overlapping or apart; hypothesis words in or out of time
    order)."""
    rng = random.Random(seed)
    utts, streams = _random_case(rng, rng.randint(1, 6), rng.randint(1, 3))
    if seed % 2:  # hypothesis words out of time order
        streams = [
            tcorc.Words(h.ids, h.times[rng.sample(range(len(h.ids)), len(h.ids))]) for h in streams
        ]
    k = 100
    bx = tcorc.boxes(utts, streams)
    chosen = tcorc.tcorc_assign(utts, streams, bx, k)
    best = min(
        _cost(utts, streams, c, k) for c in itertools.product(range(len(streams)), repeat=len(utts))
    )
    assert _cost(utts, streams, chosen, k) == best


def test_checkpointed_walk_back_equals_one_stretch(scorer, monkeypatch) -> None:
    refs, hyps = longform.synthetic_corpus(seed=8, sessions=2, speakers=(3,), words=300)
    refs, hyps = _normalised(scorer, refs), _normalised(scorer, hyps)
    calls: list[int] = []
    stretches = tcorc._stretches

    def counted(states):
        calls.append(len(stretches(states)))
        return stretches(states)

    monkeypatch.setattr(tcorc, "_stretches", counted)
    split = score_sessions(scorer, refs, hyps, "tcorcwer").sessions
    assert min(calls) > 2  # really checkpointed
    monkeypatch.setattr(tcorc, "_stretches", lambda states: [0])
    whole = score_sessions(scorer, refs, hyps, "tcorcwer").sessions
    assert [s.to_dict() for s in split] == [s.to_dict() for s in whole]


def test_refuses_a_session_too_large(scorer, monkeypatch) -> None:
    monkeypatch.setattr(tcorc, "TCORC_MAX_STATES", 3)
    with pytest.raises(ScoringError, match="session 's1': time-constrained ORC-WER needs 5 states"):
        score_sessions(scorer, REF, HYP, "tcorcwer")
    monkeypatch.setattr(tcorc, "TCORC_MAX_STATES", 1 << 20)
    monkeypatch.setattr(tcorc, "TCORC_MAX_WORK", 10)
    with pytest.raises(ScoringError, match="lower --collar, cut long reference segments"):
        score_sessions(scorer, REF, HYP, "tcorcwer")


def test_ops_score_tcorcwer(tmp_path: Path) -> None:
    ref, hyp = tmp_path / "ref.stm", tmp_path / "hyp.seglst.json"
    write_timed(ref, REF, "stm")
    write_timed(hyp, HYP, "seglst")
    out = tmp_path / "out"
    proc = _ops_score(ref, hyp, "--metric", "tcorcwer", "--no-nsw", "-o", out)
    assert proc.returncode == 0, proc.stderr
    (line,) = (out / "sessions.jsonl").read_text().splitlines()
    row = json.loads(line)
    assert (row["errors"], row["sub"], row["ins"]) == (2, 1, 1)
    assert row["assignment"] == [["A@0", "x"], ["B@10", "x"], ["A@30", "y"]]
    assert "tcORC-WER (collar 5 s)" in (out / "sessions.txt").read_text()
    # a session too large: one line naming it and what to do, no traceback (here: 1 s of
    # hypothesis words every 0.05 s on 7 streams, a collar of a day)
    many = [seg(f"h{i}", 0.05 * j, 0.05 * j + 0.05, "w") for i in range(7) for j in range(200)]
    write_timed(hyp, many, "seglst")
    proc = _ops_score(ref, hyp, "--metric", "tcorcwer", "--collar", "86400", "-o", out)
    assert proc.returncode != 0
    assert "session 's1': time-constrained ORC-WER needs" in proc.stderr
    assert "Traceback" not in proc.stderr


@pytest.mark.parametrize("others", [(3,), (30, 20)])  # numpy's accumulate; the slab loop
def test_along_is_the_edit_recurrence(others: tuple[int, ...]) -> None:
    """`_along` (the band, the offsets, the running minimum slab by slab) against the plain
    time-constrained recurrence, state by state, from a table closed under insertions."""
    rng = np.random.default_rng(3)
    k, d = 50, 12
    hyp = tcorc.Words(rng.integers(0, 4, 20), np.sort(rng.uniform(0, 10, 20))[:, None] + [-1, 1])
    utt = tcorc.Words(rng.integers(0, 4, 6), np.array([(t, t + 0.5) for t in (2, 3, 3.5, 4, 6, 9)]))
    lo = 4
    x = rng.integers(0, 400, (d, *others)).astype(np.int64)
    x = np.minimum.accumulate(x - k * np.arange(d).reshape(-1, *[1] * len(others)), axis=0)
    x += k * np.arange(d).reshape(-1, *[1] * len(others))  # closed: x[j+1] <= x[j] + K
    got = tcorc._along(x.copy(), utt, hyp, (lo, lo + d - 1), k)
    flat_x, flat_got = x.reshape(d, -1), got.reshape(d, -1)
    for col in range(flat_x.shape[1]):
        row = flat_x[:, col].tolist()
        for w, (a, b) in zip(utt.ids.tolist(), utt.times.tolist(), strict=True):
            new = [row[0] + k]
            for j in range(1, d):
                h, (c, e) = hyp.ids[lo + j - 1], hyp.times[lo + j - 1]
                best = min(row[j] + k, new[j - 1] + k)
                if a < e and b > c:
                    best = min(best, row[j - 1] + (0 if h == w else k + 1))
                new.append(best)
            row = new
        assert flat_got[:, col].tolist() == row
