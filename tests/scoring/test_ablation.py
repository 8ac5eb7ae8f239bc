"""Switching one pipeline step off changes results only where that step applies."""

from __future__ import annotations

import pytest

from scoring import Scorer, ScorerConfig

CASES = {
    # step: (reference, hypothesis) pair that only this step reconciles
    "case": ("The Cat", "the cat"),
    "punc": ("Hello, world!", "hello world"),
    "itj": ("i think so", "uh i um think so"),
    "ukus": ("the colour grey", "the color gray"),
    "dae": ("i am going to go", "i'm gonna go"),
}
NEUTRAL = ("plain words only", "plain words lonely")


@pytest.mark.parametrize("step", sorted(CASES))
def test_ablation(step: str) -> None:
    on = Scorer(ScorerConfig(nsw=False, bootstrap=0))
    off = Scorer(ScorerConfig(nsw=False, bootstrap=0, **{step: False}))
    refs = {"target": CASES[step][0], "neutral": NEUTRAL[0]}
    hyps = {"target": CASES[step][1], "neutral": NEUTRAL[1]}
    a, b = on.score(refs, hyps).utterances, off.score(refs, hyps).utterances
    assert a[0].errors == 0 and b[0].errors > 0  # the step matters where it applies
    assert (a[1].codes, a[1].ref, a[1].hyp) == (b[1].codes, b[1].ref, b[1].hyp)  # and nowhere else


def test_nsw_ablation(cache_dir) -> None:
    on = Scorer(ScorerConfig(bootstrap=0, cache_dir=str(cache_dir)))
    off = Scorer(ScorerConfig(nsw=False, bootstrap=0))
    refs = {"n": "It costs $5.", "w": "no numbers here"}
    hyps = {"n": "it costs five dollars", "w": "no numbers hear"}
    a, b = on.score(refs, hyps).utterances, off.score(refs, hyps).utterances
    assert a[0].errors == 0 and b[0].errors > 0
    assert a[1].codes == b[1].codes
