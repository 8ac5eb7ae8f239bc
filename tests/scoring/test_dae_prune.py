"""The DAE forward pass pruned (scoring/dae_windows.py: `chunk_upper`, `suffix_bound`, the
`_Lattice`'s `bound`, compiled in scoring/_dp.pyx): the same optimum and the same cut rows as
the unpruned pass, compiled or not, on seeded lattices with ties, strict tokens, empty
branches and optional reference words; the bound is a lower bound on every suffix's lattice
cost; and the pass computes fewer rows."""

from __future__ import annotations

import random

import numpy as np
import pytest

from scoring import dae_windows
from scoring.align import levenshtein
from scoring.dae_windows import (
    INF,
    Item,
    Weights,
    _Lattice,
    _Plain,
    _Ref,
    _reversed,
    chunk_upper,
    cut_rows,
    item_lengths,
    plan_cuts,
    suffix_bound,
)
from tests.scoring.test_dae_dp_compiled import _both, _longest

needs_dp = pytest.mark.skipif(
    dae_windows._dp is None, reason="scoring/_dp.pyx not built (pip install -e ., make ext)"
)


def _pair(
    rng: random.Random, n: int, vocab: int, slots: float
) -> tuple[np.ndarray, np.ndarray | None, list[Item]]:
    """A reference and a lattice hypothesis of ~12% errors: a slot's first branch is what
    was written, its others (some strict, some empty) now and then the reference's words."""
    ref = [rng.randrange(vocab) for _ in range(n)]
    items: list[Item] = []
    i = 0
    while i < n:
        x = rng.random()
        if x < 0.04:
            i += 1  # a deletion
        elif x < 0.08:
            items.append(rng.randrange(vocab))  # an insertion
        elif x < 0.12:
            items.append(rng.randrange(vocab))  # a substitution
            i += 1
        elif rng.random() < slots:
            k = rng.randint(1, 2)
            said = np.array(ref[i : i + k], dtype=np.int64)
            written = np.array([rng.randrange(vocab) for _ in range(rng.randint(0, 2))])
            branches = [(written.astype(np.int64), np.zeros(len(written), dtype=bool))]
            branches.append((said, np.array([rng.random() < 0.5 for _ in said], dtype=bool)))
            if rng.random() < 0.3:
                branches.append((np.zeros(0, dtype=np.int64), np.zeros(0, dtype=bool)))
            items.append(tuple(branches))
            i += k
        else:
            items.append(ref[i])
            i += 1
    optional = None
    if rng.random() < 0.3:
        optional = np.array([rng.random() < 0.1 for _ in ref], dtype=bool)
    return np.array(ref, dtype=np.int64), optional, items


def _written(items: list[Item]) -> np.ndarray:
    return np.array(
        [t for x in items for t in ([x] if isinstance(x, int) else x[0][0].tolist())],
        dtype=np.int64,
    )


def _plain(items: list[Item]) -> _Plain:
    return _Plain.of(items, item_lengths(items))


def _cuts(items: list[Item], max_enum: int) -> list[int]:
    return plan_cuts([1 if isinstance(x, int) else len(x) for x in items], max_enum, 64)


@pytest.mark.parametrize("compiled", [pytest.param(True, marks=needs_dp), False])
def test_pruned_cut_rows_equal_the_unpruned(monkeypatch, compiled: bool) -> None:
    rng = random.Random(43)
    for case in range(60):
        vocab = rng.choice((3, 8, 200))  # few words: many ties between paths
        ref, optional, items = _pair(rng, rng.choice((0, 1, 30, 300, 1200)), vocab, 0.3)
        if not items:
            continue
        cuts = _cuts(items, rng.choice((4, 16)))
        e0 = levenshtein(ref, _written(items)) if len(ref) else len(_written(items))
        got = {}
        for cells in (0, INF):  # every pass pruned, then none
            monkeypatch.setattr(dae_windows, "_PRUNE_CELLS", cells)
            got[cells] = cut_rows(ref, optional, items, cuts, e0, compiled)
        assert got[0] == got[INF], case


@needs_dp
def test_pruned_columns_are_numpys_cell_for_cell() -> None:
    rng = random.Random(5)
    for _ in range(40):
        ref, optional, items = _pair(rng, rng.choice((1, 40, 500)), rng.choice((3, 50)), 0.3)
        w = Weights.for_pair(len(ref), _longest(items))
        upper = (levenshtein(ref, _written(items)) + 1) * w.e - 1
        bound = suffix_bound(ref, optional, items, item_lengths(items), upper // w.e, compiled=True)
        lattice = _Lattice(_Ref.make(ref, optional, w), w, len(ref), upper, True, bound)
        keep = frozenset(rng.sample(range(len(items)), min(len(items), 8)))
        _both(lattice, items, keep)


def test_the_suffix_bound_is_at_most_every_suffix_cost() -> None:
    # whole rows (the numpy path's plain distances, exact everywhere): the bound of every
    # row of every stride column is at most the least lattice cost from there to the end
    rng = random.Random(9)
    for _ in range(15):
        ref, optional, items = _pair(rng, rng.choice((20, 120)), rng.choice((3, 20)), 0.4)
        n = len(ref)
        longest = _longest(items)
        w = Weights.for_pair(n, longest)
        lens = item_lengths(items)
        bound = suffix_bound(ref, optional, items, lens, n + longest, compiled=False)
        assert bound is not None
        for k, p in enumerate(range(0, len(items), dae_windows._STRIDE)):
            back_opt = None if optional is None else optional[::-1]
            full = n + longest
            back, _ = _Lattice(_Ref.make(ref[::-1], back_opt, w), w, full, None, False).run(
                _reversed(items[p:])
            )
            suffix = back[::-1] // w.e  # the edits from row r at item p to the end
            assert (bound.rows(k, 0, n) <= suffix).all()


def test_the_chunks_path_is_an_upper_bound_close_to_the_optimum() -> None:
    rng = random.Random(3)
    ref, optional, items = _pair(rng, 3000, 400, 0.3)
    longest = _longest(items)
    w = Weights.for_pair(len(ref), longest)
    best, _, _ = cut_rows(ref, None, items, [], levenshtein(ref, _written(items)))
    upper = chunk_upper(ref, None, items, _plain(items), w)
    assert upper is not None and best <= upper < INF
    assert w.counts(upper)[0] <= w.counts(best)[0] * 1.02  # cut where the text matches


def test_the_bound_narrows_the_forward_band() -> None:
    rng = random.Random(1)
    ref, _, items = _pair(rng, 3000, 400, 0.3)
    longest = _longest(items)
    w = Weights.for_pair(len(ref), longest)
    e0 = levenshtein(ref, _written(items))
    upper = (e0 + 1) * w.e - 1
    plain = _plain(items)
    upper_cut = min(upper, chunk_upper(ref, None, items, plain, w) or upper)
    keep = frozenset(range(0, len(items), 16))
    rows = {}
    for name, up, bound in (
        ("before", upper, None),
        ("pruned", upper_cut, suffix_bound(ref, None, items, plain.lens, upper_cut // w.e)),
    ):
        last, kept = _Lattice(_Ref.make(ref, None, w), w, e0, up, bound=bound).run(items, keep)
        rows[name] = (int(last[len(ref)]), sum(len(band) for _, band in kept.values()))
    assert rows["pruned"][0] == rows["before"][0]  # the same optimum
    assert rows["pruned"][1] * 4 < rows["before"][1]
