"""The DAE forward pass pruned (scoring/dae_windows.py: `chunk_upper`, `suffix_bound`, the
`_Lattice`'s `bound`, compiled in scoring/_dp.pyx): the same optimum and the same cut rows as
the unpruned pass, compiled or not, on seeded lattices with ties, strict tokens, empty
branches and optional reference words; the gadget's bit-parallel rows (class rows, free
rows) are its textbook table; the bound is a lower bound on every suffix's lattice cost;
and the pass computes fewer rows, about as many a column on a long pair as on a short one."""

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


@pytest.mark.parametrize("compiled", [pytest.param(True, marks=needs_dp), False])
def test_the_suffix_bound_is_at_most_every_suffix_cost(compiled: bool) -> None:
    # the band as wide as the pair (the numpy path: whole rows, exact everywhere): the bound
    # of every row of every stride column is at most the least lattice cost from there to
    # the end
    rng = random.Random(9)
    for _ in range(15):
        ref, optional, items = _pair(rng, rng.choice((20, 120)), rng.choice((3, 20)), 0.4)
        n = len(ref)
        longest = _longest(items)
        w = Weights.for_pair(n, longest)
        lens = item_lengths(items)
        bound = suffix_bound(ref, optional, items, lens, n + longest, compiled)
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


def _relaxed_table(
    rows: np.ndarray, classes: list[set[int]], free: np.ndarray, cols: np.ndarray
) -> np.ndarray:
    """The gadget's whole table by the textbook recurrence: row i matches any id of its
    class, and a free row's insertion costs nothing."""
    n, m = len(rows), len(cols)
    table = np.zeros((n + 1, m + 1), dtype=np.int64)
    table[0] = np.arange(m + 1)
    for i in range(1, n + 1):
        ins = 0 if free[i - 1] else 1
        table[i, 0] = table[i - 1, 0] + ins
        for j in range(1, m + 1):
            diag = table[i - 1, j - 1] + (0 if int(cols[j - 1]) in classes[i - 1] else 1)
            table[i, j] = min(diag, table[i - 1, j] + ins, table[i, j - 1] + 1)
    return table


def _held(arrays: tuple[np.ndarray, ...], k: int, m: int) -> tuple[int, np.ndarray]:
    """Kept row k's values from `myers_band_words`' arrays: (first column, values)."""
    base, c0, words, vp, vn = arrays
    nw = int(words[k])
    up = np.unpackbits(vp[k, :nw].view(np.uint8), bitorder="little").astype(np.int64)
    down = np.unpackbits(vn[k, :nw].view(np.uint8), bitorder="little").astype(np.int64)
    values = np.concatenate(([base[k]], base[k] + np.cumsum(up - down)))
    return int(c0[k]), values[: min(m, int(c0[k]) + 64 * nw) - int(c0[k]) + 1]


@pytest.mark.parametrize("compiled", [pytest.param(True, marks=needs_dp), False])
def test_gadget_rows_are_the_relaxed_table(compiled: bool) -> None:
    rng = random.Random(11)
    for _ in range(150):
        n, m, vocab = rng.randint(1, 30), rng.randint(1, 150), rng.randint(2, 6)
        rows = np.array([rng.randrange(vocab) for _ in range(n)], dtype=np.int64)
        extra = [[rng.randrange(vocab) for _ in range(rng.choice((0, 0, 1, 2)))] for _ in rows]
        free = np.array([rng.random() < 0.3 for _ in rows], dtype=np.uint8)
        cols = np.array([rng.randrange(vocab) for _ in range(m)], dtype=np.int64)
        start = np.concatenate(([0], np.cumsum([len(x) for x in extra]))).astype(np.int64)
        ids = np.array([t for x in extra for t in x], dtype=np.int64)
        classes = [{r, *x} for r, x in zip(rows.tolist(), extra, strict=True)]
        table = _relaxed_table(rows, classes, free, cols)
        keep = np.arange(1, n + 1, dtype=np.int64)
        bands = [(-n - 1, m + 1)]  # every column: the table's values
        if compiled:  # a narrow band: values never below the table's
            bands.append((rng.randint(-n, 0), rng.randint(0, 3)))
        for dlo, dhi in bands:
            if compiled and dae_windows._dp is not None:
                arrays = dae_windows._dp.myers_band_words(
                    rows, cols, keep, dlo, dhi, start, ids, free
                )
            else:
                arrays = dae_windows._whole_rows(rows, cols, keep, dlo, dhi, (start, ids, free))
            for k, i in enumerate(keep.tolist()):
                c0, values = _held(arrays, k, m)
                want = table[i, c0 : c0 + len(values)]
                if dlo == -n - 1:
                    assert values.tolist() == want.tolist()
                else:
                    assert (values >= want).all()


@needs_dp
def test_columns_pruned_by_the_optimum_are_numpys_cell_for_cell() -> None:
    # the bound as tight as it gets (U the optimum): rows dropped off the band, and the
    # band's upper end found by jumps (compiled) or row by row (numpy), the same columns
    rng = random.Random(12)
    for _ in range(40):
        n = rng.choice((40, 500, 2000))
        ref, optional, items = _pair(rng, n, rng.choice((3, 50, 400)), 0.3)
        if not items:
            continue
        lens = item_lengths(items)
        w = Weights.for_pair(len(ref), _longest(items))
        e0 = levenshtein(ref, _written(items)) if len(ref) else len(_written(items))
        best = cut_rows(ref, optional, items, [], e0)[0]
        bound = suffix_bound(ref, optional, items, lens, best // w.e)
        free = 0 if optional is None else int(optional.sum())
        lattice = _Lattice(_Ref.make(ref, optional, w), w, e0 + free, best, True, bound)
        keep = frozenset(range(0, len(items), dae_windows._STRIDE))
        _both(lattice, items, keep)
        assert int(lattice.run(items, keep, lens)[0][len(ref)]) == best


def test_the_rows_a_column_do_not_grow_with_the_pair() -> None:
    # the gadget's bound leaves about as many live rows a stride column on a pair 8 times
    # as long (the plain reading's, less the savings still to come, left ~8 times as many)
    means = []
    for n in (1000, 8000):
        ref, _, items = _pair(random.Random(1), n, 400, 0.3)
        lens = item_lengths(items)
        w = Weights.for_pair(len(ref), _longest(items))
        upper = chunk_upper(ref, None, items, _plain(items), w)
        assert upper is not None
        bound = suffix_bound(ref, None, items, lens, upper // w.e)
        keep = frozenset(range(dae_windows._STRIDE, len(items), dae_windows._STRIDE))
        e0 = levenshtein(ref, _written(items))
        last, kept = _Lattice(_Ref.make(ref, None, w), w, e0, upper, bound=bound).run(items, keep)
        assert int(last[len(ref)]) == upper  # the chunks' path is optimal here
        means.append(sum(len(band) for _, band in kept.values()) / len(kept))
    assert means[1] < 2 * means[0], means
