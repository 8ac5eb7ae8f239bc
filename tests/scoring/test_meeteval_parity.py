"""MeetEval parity: our cpWER, tcpWER and ORC-WER error counts equal `meeteval`'s on the same
tokens.

Both sides get the same words: each segment normalised first by our Scorer (case, punctuation,
interjections, UK-US; NSW and DAE off, as MeetEval has neither), so a second normalisation
changes nothing. Corpora: a seeded generated one (2-4 speakers, overlapping turns, renamed,
merged and extra hypothesis speakers; benchmarks/longform_score.py's generator) and the
embedded long-form sets (datasets/mini_meeting_en, datasets/mini_long_en) against seeded
perturbations of their references. Per session: errors and reference words equal; the corpus
totals then are too.
"""

from __future__ import annotations

import importlib.util
import random
from dataclasses import replace
from pathlib import Path

import pytest

from scoring import Scorer, ScorerConfig
from scoring.meeting import score_sessions
from scoring.segments import Segment
from scoring.timed import read_seglst

meeteval = pytest.importorskip("meeteval")
from meeteval.io import SegLST  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location(
    "longform_score", ROOT / "benchmarks" / "longform_score.py"
)
assert _spec is not None and _spec.loader is not None
longform = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(longform)

EMBEDDED = ["mini_meeting_en", "mini_long_en"]


@pytest.fixture(scope="module")
def scorer() -> Scorer:
    return Scorer(ScorerConfig(nsw=False, dae=False, bootstrap=0))


def _normalised(scorer: Scorer, segs: list[Segment]) -> list[Segment]:
    return [replace(s, words=" ".join(scorer.normalize(s.words))) for s in segs]


def _meeteval(metric: str, refs: list[Segment], hyps: list[Segment], collar: float) -> dict:
    r = SegLST([s.to_seglst() for s in refs])
    h = SegLST([s.to_seglst() for s in hyps])
    if metric == "cpwer":
        out = meeteval.wer.cpwer(r, h)
    elif metric == "orcwer":
        out = meeteval.wer.orcwer(r, h)
    else:
        out = meeteval.wer.tcpwer(r, h, collar=collar)
    return {sid: (er.errors, er.length) for sid, er in out.items()}


def _ours(scorer, metric: str, refs, hyps, collar: float) -> dict:
    res = score_sessions(scorer, refs, hyps, metric, collar=collar)
    return {s.session_id: (s.errors, s.n_ref) for s in res.sessions}


def _perturbed(refs: list[Segment], seed: int) -> list[Segment]:
    """A system's output for a reference: word errors, renamed speakers, jittered times."""
    rng = random.Random(seed)
    speakers = sorted({(s.session_id, s.speaker) for s in refs})
    names = {k: f"h{i}" for i, k in enumerate(rng.sample(speakers, len(speakers)))}
    return longform._sorted_per_speaker(
        [
            replace(h, speaker=names[h.session_id, r.speaker])
            for r, h in zip(
                refs,
                longform._hypothesis(rng, refs, {s.speaker: s.speaker for s in refs}, 0.2),
                strict=True,
            )
        ]
    )


@pytest.mark.parametrize(
    ("metric", "collar"), [("cpwer", 5.0), ("tcpwer", 5.0), ("tcpwer", 0.5), ("tcpwer", 0.0)]
)
def test_generated_corpus(scorer, metric: str, collar: float) -> None:
    refs, hyps = longform.synthetic_corpus(seed=11, sessions=6, words=300, seconds=120.0)
    refs, hyps = _normalised(scorer, refs), _normalised(scorer, hyps)
    want = _meeteval(metric, refs, hyps, collar)
    got = _ours(scorer, metric, refs, hyps, collar)
    assert got == want
    # not trivial: errors everywhere, and (collar 5 s) not every word wrong
    rate = sum(e for e, _ in got.values()) / sum(n for _, n in got.values())
    assert all(e for e, _ in got.values()) and rate > 0.05
    assert collar < 5 or rate < 0.6


def test_generated_corpus_orcwer(scorer) -> None:
    # ORC-WER's table grows with the product of the streams' lengths: shorter sessions
    refs, hyps = longform.synthetic_corpus(
        seed=13, sessions=6, speakers=(2, 3), words=120, seconds=50.0
    )
    refs, hyps = _normalised(scorer, refs), _normalised(scorer, hyps)
    got = _ours(scorer, "orcwer", refs, hyps, 0.0)
    assert got == _meeteval("orcwer", refs, hyps, 0.0)
    assert all(e for e, _ in got.values())


def test_orcwer_in_checkpointed_memory(scorer) -> None:
    """ORC-WER over a session of 39 segments (300 words, two streams of ~150): meeteval's
    counts, while the tables kept stay about 2 sqrt(39) instead of 3 x 39 (tracemalloc peak of
    the whole scoring 4.4 MB here; 15.7 MB keeping every utterance's tables, as before)."""
    import tracemalloc

    refs, hyps = longform.synthetic_corpus(
        seed=21, sessions=1, speakers=(2,), words=300, seconds=120.0
    )
    refs, hyps = _normalised(scorer, refs), _normalised(scorer, hyps)
    tracemalloc.start()
    try:
        got = _ours(scorer, "orcwer", refs, hyps, 0.0)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert got == _meeteval("orcwer", refs, hyps, 0.0)
    assert peak < 8 * 2**20, peak


def test_collar_matters(scorer) -> None:
    refs, hyps = longform.synthetic_corpus(seed=12, sessions=2, words=200, seconds=80.0)
    refs, hyps = _normalised(scorer, refs), _normalised(scorer, hyps)
    tight = _ours(scorer, "tcpwer", refs, hyps, 0.0)
    wide = _ours(scorer, "tcpwer", refs, hyps, 5.0)
    cp = _ours(scorer, "cpwer", refs, hyps, 0.0)
    # a wider collar only allows more pairings; with 5 s tcpWER is close to cpWER
    assert all(wide[s][0] <= tight[s][0] for s in wide)
    assert sum(v[0] for v in tight.values()) > sum(v[0] for v in wide.values())
    assert all(cp[s][0] <= wide[s][0] for s in wide)


@pytest.mark.parametrize("name", EMBEDDED)
@pytest.mark.parametrize("metric", ["cpwer", "tcpwer", "orcwer"])
def test_embedded_sets(scorer, name: str, metric: str) -> None:
    path = ROOT / "datasets" / name / "segments.seglst.json"
    if not path.is_file():
        pytest.skip(f"{path} not built yet")
    refs = _normalised(scorer, read_seglst(path))
    hyps = _normalised(scorer, _perturbed(refs, seed=5))
    want = _meeteval(metric, refs, hyps, 5.0)
    got = _ours(scorer, metric, refs, hyps, 5.0)
    assert got == want
    assert sum(e for e, _ in got.values()) > 0
