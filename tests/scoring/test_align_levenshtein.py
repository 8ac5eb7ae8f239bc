"""`scoring.align.levenshtein`: the distance through rapidfuzz's banded cutoff, doubled until it
fits, equals the whole table's on pairs of every length and error rate (the cutoff's edges:
distances just under, at and over each doubling, totally different sides, one side empty)."""

from __future__ import annotations

import random

from rapidfuzz.distance import Levenshtein

from scoring.align import levenshtein


def _system(rng: random.Random, ref: list[int], err: float) -> list[int]:
    hyp: list[int] = []
    for x in ref:
        r = rng.random()
        if r < err / 3:
            hyp.append(rng.randrange(50))
        elif r < 2 * err / 3:
            continue
        elif r < err:
            hyp += [x, rng.randrange(50)]
        else:
            hyp.append(x)
    return hyp


def test_levenshtein_is_the_whole_tables() -> None:
    rng = random.Random(5)
    for _ in range(300):
        ref = [rng.randrange(50) for _ in range(rng.choice((0, 1, 63, 64, 65, 700, 4000)))]
        hyp = _system(rng, ref, rng.choice((0.0, 0.02, 0.1, 0.3, 0.7, 1.0)))
        if rng.random() < 0.1:
            hyp = [rng.randrange(50) for _ in range(rng.randint(0, 5000))]
        want = Levenshtein.distance(ref, hyp)
        assert levenshtein(ref, hyp) == want
        assert levenshtein(hyp, ref) == want
