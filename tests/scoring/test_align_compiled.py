"""`align_arrays`' batched tables filled by scoring/_dp.pyx against numpy's row loop (the
fallback where the extension is not built, `align.COMPILED = False`): the same op strings and
costs on seeded random batches of short pairs with ties (a vocabulary of 2-4 ids), empty sides,
strict hypothesis tokens (infeasible pairs among them) and optional reference words, in
narrow batches (<= `_NARROW` pairs: one running minimum a row) and wide ones (compiled pair by
pair, `_dp.align_pairs`, each with its batch's `inf`: more than `_CHUNK` pairs make several)."""

from __future__ import annotations

import random

import numpy as np
import pytest

from scoring import align

pytestmark = pytest.mark.skipif(
    align._dp is None, reason="scoring/_dp.pyx not built (pip install -e ., make ext)"
)


def _batch(rng: random.Random, pairs: int) -> tuple[list[np.ndarray], dict]:
    vocab = rng.choice((2, 4, 40))
    top = rng.choice((10, 40_000, 3_000_000_000))  # id types int16, int32, int64
    refs, hyps, strict, opt = [], [], [], []
    for _ in range(pairs):
        n, m = rng.choice((0, 1, 3, 12, 30)), rng.choice((0, 1, 3, 12, 30))
        refs.append([top - rng.randrange(vocab) for _ in range(n)])
        hyps.append([top - rng.randrange(vocab) for _ in range(m)])
        strict.append([rng.random() < 0.15 for _ in range(m)])
        opt.append([rng.random() < 0.15 for _ in range(n)])
    flat = [np.array([x for p in side for x in p], dtype=np.int64) for side in (refs, hyps)]
    lens = [np.array([len(p) for p in side], dtype=np.int64) for side in (refs, hyps)]
    offs = [np.concatenate(([0], np.cumsum(x)[:-1])).astype(np.int64) for x in lens]
    args = [flat[0], offs[0], lens[0], flat[1], offs[1], lens[1], rng.choice((31, 200))]
    kw: dict = {}
    if rng.random() < 0.5:
        kw["hyp_strict"] = np.array([x for p in strict for x in p], dtype=bool)
    if rng.random() < 0.5:
        kw["ref_optional"] = np.array([x for p in opt for x in p], dtype=bool)
    return args, kw


@pytest.mark.parametrize("pairs", [1, 7, align._NARROW, align._NARROW + 1, 700, 9000])
def test_batched_tables_are_numpys(pairs: int, monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(pairs)
    for _ in range(12 if pairs < 700 else 3 if pairs < 9000 else 1):
        args, kw = _batch(rng, pairs)
        got = {}
        for compiled in (True, False):
            monkeypatch.setattr(align, "COMPILED", compiled)
            codes, costs = align.align_arrays(*args, align.Marks(**kw))
            got[compiled] = (codes, costs.tolist())
        assert got[True] == got[False]


def test_bit_parallel_deltas_are_numpys(monkeypatch: pytest.MonkeyPatch) -> None:
    # `_myers` in 64-bit words: the distance and every kept row's deltas, across word edges
    rng = random.Random(9)
    for _ in range(300):
        n, m = rng.choice((1, 2, 63, 64, 65, 200)), rng.choice((1, 2, 63, 64, 65, 128, 300))
        vocab = rng.choice((2, 5, 60))
        ref = np.array([rng.randrange(vocab) for _ in range(n)], dtype=np.int16)
        hyp = np.array([rng.randrange(vocab) + rng.choice((0, 0, 30)) for _ in range(m)])
        keep = set(rng.sample(range(n + 1), min(n + 1, 5)))
        got = {}
        for compiled in (True, False):
            monkeypatch.setattr(align, "COMPILED", compiled)
            got[compiled] = align._myers(ref, hyp, keep)
        assert got[True] == got[False]


@pytest.mark.parametrize("whole", [True, False])
def test_band_rows_are_numpys(whole: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    # `_align_band` (a plain long pair's band) compiled against `_Band.next` row by row: the
    # same ops and cost on seeded random pairs with many ties (vocabularies of 2-6 ids), with
    # the whole table of codes kept, or every s-th row and the stretches recomputed
    if not whole:
        monkeypatch.setattr(align, "_BAND_CELLS", 1)
    rng = random.Random(43 + whole)
    for _ in range(40):
        n = rng.choice((1, 2, 5, 40, 300, 1500))
        m = max(1, n + rng.randrange(-n // 3 - 1, n // 3 + 2))
        vocab = rng.choice((2, 3, 6, 1000))
        dtype = rng.choice((np.int32, np.int64))
        ref = np.array([rng.randrange(vocab) for _ in range(n)], dtype=dtype)
        hyp = np.array(
            [x if rng.random() < 0.7 else rng.randrange(vocab) for x in ref[:m].tolist()]
            + [rng.randrange(vocab) for _ in range(m - min(n, m))],
            dtype=np.int64,
        )
        k = max(n, m) + 1
        got = {}
        for compiled in (True, False):
            monkeypatch.setattr(align, "COMPILED", compiled)
            got[compiled] = align._align_band(ref, hyp, k, None)
        assert got[True] == got[False]
        # and the whole table's (`_align_long`, no band) ops and cost
        assert got[True] == align._align_long(ref, hyp, k, None, None)


def test_banded_anchors_are_the_whole_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    # `_anchors` from the band's words only (`_dp.myers_band`) against `_myers` over whole rows
    # in Python integers: the same distance and anchors, and so the same ops, on seeded pairs
    # of 1-3,000 words (across word edges), with many ties (2-6-word vocabularies) and few
    rng = random.Random(7)
    for _ in range(120):
        n = rng.choice((1, 2, 40, 63, 64, 65, 129, 300, 1000, 3000))
        m = max(1, n + rng.randrange(-n // 3 - 1, n // 3 + 2))
        vocab = rng.choice((2, 3, 6, 1000))
        keep = rng.choice((0.3, 0.7, 0.95))
        ref = np.array([rng.randrange(vocab) for _ in range(n)], dtype=np.int64)
        hyp = np.array(
            [x if rng.random() < keep else rng.randrange(vocab) for x in ref[:m].tolist()]
            + [rng.randrange(vocab) for _ in range(m - min(n, m))],
            dtype=np.int32,
        )
        got = {}
        for compiled in (True, False):
            monkeypatch.setattr(align, "COMPILED", compiled)
            got[compiled] = align._anchors(ref, hyp)
        assert got[True] == got[False]
        if n >= 1000:
            k = max(n, m) + 1
            monkeypatch.setattr(align, "COMPILED", True)
            assert align._align_anchored(ref, hyp, k) == align._align_long(ref, hyp, k, None, None)


@pytest.mark.parametrize("block", [1, 2, 63, 64, 65, 129])
def test_banded_anchors_on_the_bands_edge(block: int, monkeypatch: pytest.MonkeyPatch) -> None:
    # a block of words only one side has, at either end: the one least-cost path runs along
    # the band's edge diagonal, across the words' edges (where the band's first word moves)
    for y in (200, 1000):
        for side in range(4):
            extra, shared = np.arange(10_000, 10_000 + block), np.arange(y)
            longer = np.concatenate([extra, shared] if side < 2 else [shared, extra])
            ref, hyp = (longer, shared) if side % 2 else (shared, longer)
            got = {}
            for compiled in (True, False):
                monkeypatch.setattr(align, "COMPILED", compiled)
                got[compiled] = align._anchors(ref, hyp)
            assert got[True] == got[False]
            assert len(got[True][1]) == (len(ref) - 1) // 32  # every 32nd row: one path
