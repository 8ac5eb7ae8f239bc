"""`best_combination` with a band (`_dp.steps` on the rows within it of each column's diagonal
only) against whole columns, compiled and numpy: the same winner on seeded DAE windows (a
reference, a hypothesis copied from it with ~5-30% errors, slots of 2-4 branches whose
alternatives are strict, ties from 2-4-word vocabularies), with the band the Scorer gives (the
written forms' distance), the winner's own edits, and guesses too short (then the whole
columns run again) or none at all."""

from __future__ import annotations

import itertools
import random

import numpy as np
import pytest
from rapidfuzz.distance import Levenshtein

from scoring import dae_windows
from scoring.dae_windows import Weights, best_combination

pytestmark = pytest.mark.skipif(
    dae_windows._dp is None, reason="scoring/_dp.pyx not built (pip install -e ., make ext)"
)


def _window(rng: random.Random) -> tuple[np.ndarray, list[np.ndarray], list[list]]:
    vocab = rng.choice((2, 4, 30, 1000))
    n = rng.choice((0, 3, 20, 60, 150))
    ref = [rng.randrange(vocab) for _ in range(n)]
    rate = rng.choice((0.05, 0.15, 0.3))
    hyp: list[int] = []
    for x in ref:
        r = rng.random()
        if r >= rate / 3:
            hyp.append(x if r >= 2 * rate / 3 else rng.randrange(vocab))
        if rng.random() < rate / 3:
            hyp.append(rng.randrange(vocab))
    # slots at a few places: the written span, then alternatives (strict where not written:
    # often a nearby reference word, so that some alternatives win)
    n_slots = rng.randint(1, 4)
    cuts = sorted(rng.sample(range(len(hyp) + 1), min(n_slots, len(hyp) + 1)))
    runs, slots, at = [], [], 0
    for c in cuts:
        runs.append(np.array(hyp[at:c], dtype=np.int64))
        written = [rng.randrange(vocab) for _ in range(rng.randint(1, 2))]
        branches = [(np.array(written, dtype=np.int64), np.zeros(len(written), dtype=bool))]
        for _ in range(rng.randint(1, 3)):
            near = ref[min(c, len(ref) - 1)] if ref and rng.random() < 0.6 else rng.randrange(vocab)
            alt = [near] + [rng.randrange(vocab) for _ in range(rng.randint(0, 1))]
            branches.append((np.array(alt, dtype=np.int64), np.array([True] * len(alt))))
        slots.append(branches)
        at = c
    runs.append(np.array(hyp[at:], dtype=np.int64))
    return np.array(ref, dtype=np.int64), runs, slots


def _edits(ref: np.ndarray, runs: list[np.ndarray], slots: list[list], combo: int) -> int:
    """The winner's least edits (its weight's E), by the whole columns."""
    picks = next(itertools.islice(itertools.product(*[range(len(s)) for s in slots]), combo, None))
    longest = sum(map(len, runs)) + sum(max(len(b[0]) for b in s) for s in slots)
    w = Weights.for_pair(len(ref), longest)
    cols = dae_windows._half(
        ref, runs, [[s[i]] for s, i in zip(slots, picks, strict=True)], w, True, True
    )
    return int(cols[0, -1]) // w.e


def test_banded_winner_is_the_whole_columns_winner() -> None:
    rng = random.Random(4301)
    narrower = 0
    for _ in range(400):
        ref, runs, slots = _window(rng)
        want = best_combination(ref, runs, slots, compiled=True)
        assert want == best_combination(ref, runs, slots, compiled=False)
        written = np.concatenate(
            [runs[0], *[x for s, r in zip(slots, runs[1:], strict=True) for x in (s[0][0], r)]]
        )
        e_written = Levenshtein.distance(ref.tolist(), written.tolist())
        exact = _edits(ref, runs, slots, want)
        assert exact <= e_written  # (the written forms are one of the combinations)
        narrower += 2 * e_written + 1 < len(ref)
        for band in {e_written, exact, max(exact - 1, 0), exact // 2, 0, e_written + 7}:
            assert best_combination(ref, runs, slots, compiled=True, band=band) == want, band
            assert best_combination(ref, runs, slots, compiled=False, band=band) == want
    assert narrower >= 80  # bands narrower than the reference, often
