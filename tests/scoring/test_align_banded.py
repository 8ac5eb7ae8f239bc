"""`align_arrays` with `edits` (each pair's table cut to the band of cells a path of that many
edits can reach, `_dp.align_banded`) against the whole tables: compiled (`_dp.fill_table` on
narrow batches, `_dp.align_pairs` on wide ones) and numpy's row loop (`align.COMPILED =
False`). Seeded DAE-window-like pairs (a reference, a hypothesis with ~5-30% errors, strict
tokens on matched words and on random ones, infeasible pairs among them, optional reference
words), ties from 2-4-word vocabularies; guesses exact, short (the band is widened), long,
none and random: the same op strings and costs in every case (an infeasible pair's ops, which
nothing reads, are those of the wide batches' table form, as `align_pairs` gives them)."""

from __future__ import annotations

import random

import numpy as np
import pytest

from scoring import align

_NARROW = align._NARROW
pytestmark = pytest.mark.skipif(
    align._dp is None, reason="scoring/_dp.pyx not built (pip install -e ., make ext)"
)


def _pair(rng: random.Random, vocab: int) -> tuple[list[int], list[int], list[bool], list[bool]]:
    """A reference and a hypothesis copied from it with substitutions, deletions and
    insertions; strict flags (on copied words, and now and then on any word) and optional
    reference words."""
    n = rng.choice((0, 1, 2, 5, 30, 90, 200))
    ref = [rng.randrange(vocab) for _ in range(n)]
    rate = rng.choice((0.05, 0.15, 0.3))
    hyp: list[int] = []
    strict: list[bool] = []
    for x in ref:
        r = rng.random()
        if r < rate / 3:
            continue  # deleted
        if r < 2 * rate / 3:
            hyp.append(rng.randrange(vocab))  # substituted (or not, by chance)
            strict.append(rng.random() < 0.03)
        else:
            hyp.append(x)
            strict.append(rng.random() < 0.2)
        if rng.random() < rate / 3:
            hyp.append(rng.randrange(vocab))  # inserted
            strict.append(rng.random() < 0.03)
    opt = [rng.random() < 0.1 for _ in ref]
    return ref, hyp, strict, opt


def _batch(rng: random.Random, pairs: int) -> tuple[list, dict, np.ndarray]:
    vocab = rng.choice((2, 4, 50, 5000))
    made = [_pair(rng, vocab) for _ in range(pairs)]
    flat = [np.array([x for p in made for x in p[side]], dtype=np.int64) for side in (0, 1)]
    lens = [np.array([len(p[side]) for p in made], dtype=np.int64) for side in (0, 1)]
    offs = [np.concatenate(([0], np.cumsum(x)[:-1])).astype(np.int64) for x in lens]
    k = int(max(lens[0].max(), lens[1].max())) + 1
    args = [flat[0], offs[0], lens[0], flat[1], offs[1], lens[1], k]
    kw: dict = {}
    if rng.random() < 0.7:
        kw["hyp_strict"] = np.array([x for p in made for x in p[2]], dtype=bool)
    if rng.random() < 0.4:
        kw["ref_optional"] = np.array([x for p in made for x in p[3]], dtype=bool)
    n_opt = np.array([sum(p[3]) for p in made], dtype=np.int64)
    return args, kw, n_opt if "ref_optional" in kw else np.zeros(pairs, dtype=np.int64)


@pytest.mark.parametrize("pairs", [1, 9, align._NARROW, align._NARROW + 3])
def test_banded_tables_give_the_whole_tables_ops(
    pairs: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = random.Random(4300 + pairs)
    narrow = 0  # pairs whose exact guess gave a band narrower than the table
    for _ in range(40 if pairs < 100 else 6):
        args, kw, n_opt = _batch(rng, pairs)
        whole = {}
        for compiled in (True, False):
            monkeypatch.setattr(align, "COMPILED", compiled)
            codes, costs = align.align_arrays(*args, align.Marks(**kw))
            whole[compiled] = (codes, costs.tolist())
        assert whole[True] == whole[False]
        codes, costs = whole[True]
        k = args[-1]
        feasible = np.array([c != align.INFEASIBLE for c in costs])
        # an infeasible pair's ops (never used: it loses to the written forms) are those of
        # the table's form in its batch; a banded batch's are the wide form's (`align_pairs`)
        monkeypatch.setattr(align, "_NARROW", 0)
        wide, wide_costs = align.align_arrays(*args, align.Marks(**kw))
        monkeypatch.setattr(align, "_NARROW", _NARROW)
        assert wide_costs.tolist() == costs
        assert [c for c, f in zip(wide, feasible, strict=True) if f] == [
            c for c, f in zip(codes, feasible, strict=True) if f
        ]
        exact = np.array([c // k if f else 0 for c, f in zip(costs, feasible, strict=True)])
        n, m = args[2], args[5]
        width = np.maximum(exact + n_opt, np.abs(m - n)) + 1
        narrow += int(np.count_nonzero(feasible & (width < m + 1)))
        monkeypatch.setattr(align, "COMPILED", True)
        guesses = {
            "exact": exact,
            "short": np.maximum(exact - rng.choice((1, 3, 10)), 0),
            "long": exact + rng.choice((1, 4, 40)),
            "none": np.full(pairs, -1),
            "zero": np.zeros(pairs, dtype=np.int64),
            "random": np.array([rng.randrange(-1, 60) for _ in range(pairs)]),
        }
        for name, guess in guesses.items():
            got, got_costs = align.align_arrays(
                *args, align.Marks(**kw, edits=guess.astype(np.int64))
            )
            assert (got, got_costs.tolist()) == (wide, costs), name
    assert narrow >= pairs * (10 if pairs < 100 else 2)  # the bands were narrower, often


def test_banded_ties_in_a_two_word_vocabulary(monkeypatch: pytest.MonkeyPatch) -> None:
    # many least-cost paths through cells just inside and just outside the band's edges
    rng = random.Random(7)
    monkeypatch.setattr(align, "COMPILED", True)
    for _ in range(300):
        n, m = rng.randrange(0, 40), rng.randrange(0, 40)
        ref = np.array([rng.randrange(2) for _ in range(n)], dtype=np.int64)
        hyp = np.array([rng.randrange(2) for _ in range(m)], dtype=np.int64)
        one = [np.zeros(1, dtype=np.int64), np.array([n]), hyp, np.zeros(1, dtype=np.int64)]
        args = [ref, one[0], one[1], hyp, one[3], np.array([m]), 41]
        kw = {"hyp_strict": np.array([rng.random() < 0.1 for _ in range(m)], dtype=bool)}
        monkeypatch.setattr(align, "_NARROW", 0)  # (an infeasible pair's ops: the wide form's)
        want = align.align_arrays(*args, align.Marks(**kw))
        monkeypatch.setattr(align, "_NARROW", _NARROW)
        assert (
            want[0] == align.align_arrays(*args, align.Marks(**kw))[0]
            or want[1][0] == align.INFEASIBLE
        )
        for guess in range(0, 12):
            got = align.align_arrays(
                *args, align.Marks(**kw, edits=np.array([guess], dtype=np.int64))
            )
            assert (got[0], got[1].tolist()) == (want[0], want[1].tolist())
