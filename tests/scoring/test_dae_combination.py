"""`scoring.dae_windows.best_combination` (a DAE window's cheapest slot combination, met in
the middle) against aligning every combination as `Scorer._enumerate` does: the same winner
on random windows, strict alternatives and infeasible combinations included."""

from __future__ import annotations

import itertools
import random

import numpy as np

from scoring.align import FIRST_WORD, INFEASIBLE, Marks, align_arrays
from scoring.dae_windows import best_combination


def _enumerated(
    ref: list[int], runs: list[list[int]], slots: list[list[tuple[list[int], list[bool]]]]
) -> int:
    """The first combination with the least (cost, insertions): every one aligned."""
    hyp: list[int] = []
    strict: list[bool] = []
    off, lens = [], []
    for combo in itertools.product(*(range(len(s)) for s in slots)):
        off.append(len(hyp))
        hyp.extend(runs[0])
        strict.extend([False] * len(runs[0]))
        for slot, i, run in zip(slots, combo, runs[1:], strict=True):
            hyp.extend(slot[i][0])
            strict.extend(slot[i][1])
            hyp.extend(run)
            strict.extend([False] * len(run))
        lens.append(len(hyp) - off[-1])
    n = len(off)
    k = len(ref) + max(lens) + 2
    codes, costs = align_arrays(
        np.array(ref, dtype=np.int64),
        np.zeros(n, dtype=np.int64),
        np.full(n, len(ref), dtype=np.int64),
        np.array(hyp, dtype=np.int64),
        np.array(off, dtype=np.int64),
        np.array(lens, dtype=np.int64),
        k,
        Marks(np.array(strict, dtype=bool)),
    )
    assert costs[0] != INFEASIBLE  # the written forms are always feasible
    return min(range(n), key=lambda c: (int(costs[c]), codes[c].count("I"), c))


def _window(rng: random.Random) -> tuple[list[int], list[list[int]], list]:
    vocab = range(FIRST_WORD, FIRST_WORD + rng.choice((3, 5, 9)))
    ref = [rng.choice(vocab) for _ in range(rng.randint(0, 14))]
    n_slots = rng.randint(1, 5)
    runs = [[rng.choice(vocab) for _ in range(rng.randint(0, 4))] for _ in range(n_slots + 1)]
    slots = []
    for _ in range(n_slots):
        written = [rng.choice(vocab) for _ in range(rng.randint(1, 3))]
        branches = [(written, [False] * len(written))]
        for _ in range(rng.randint(1, 3)):
            alt = [rng.choice(vocab) for _ in range(rng.randint(1, 3))]
            branches.append((alt, [rng.random() < 0.8 for _ in alt]))
        slots.append(branches)
    return ref, runs, slots


def test_the_met_in_the_middle_winner_is_the_enumerated_one() -> None:
    rng = random.Random(43)
    for _ in range(1500):
        ref, runs, slots = _window(rng)
        got = best_combination(
            np.array(ref, dtype=np.int64),
            [np.array(r, dtype=np.int64) for r in runs],
            [
                [(np.array(a, dtype=np.int64), np.array(s, dtype=bool)) for a, s in slot]
                for slot in slots
            ],
        )
        assert got == _enumerated(ref, runs, slots), (ref, runs, slots)
