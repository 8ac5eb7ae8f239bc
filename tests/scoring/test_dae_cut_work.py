"""The work `cut_rows` and `Scorer._windowed` share or skip on a long pair (issue 43 item 1):
a cut's backward pass banded by the weight left gives the rows every row of the window gave;
`written_edits` bounds the written distance from above (the pieces between anchors, an
alignment of the whole) and gives the same cut rows as the exact distance; `_anchor_cells`
without stable sorts finds numpy's set operations' cells; `_distinct` is np.unique; and a
long pair's windows import neither OpenFST nor numpy.ma."""

from __future__ import annotations

import random
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from scoring import dae_windows
from scoring.align import levenshtein
from scoring.dae_windows import (
    INF,
    _anchor_cells,
    _distinct,
    _gram_keys,
    cut_rows,
    written_edits,
)
from tests.scoring.test_dae_prune import _cuts, _pair, _written, needs_dp
from tests.scoring.test_long_pair_outputs import REPO_ROOT


@pytest.mark.parametrize("compiled", [pytest.param(True, marks=needs_dp), False])
def test_banded_backward_passes_give_every_rows_cut(monkeypatch, compiled: bool) -> None:
    rng = random.Random(7)
    for case in range(50):
        vocab = rng.choice((3, 8, 200))  # few words: many ties between paths
        ref, optional, items = _pair(rng, rng.choice((1, 30, 300, 1200)), vocab, 0.3)
        if not items:
            continue
        cuts = _cuts(items, rng.choice((4, 16)))
        e0 = levenshtein(ref, _written(items))
        prune = rng.choice((0, INF))
        monkeypatch.setattr(dae_windows, "_PRUNE_CELLS", prune)
        banded = cut_rows(ref, optional, items, cuts, e0, compiled)
        with monkeypatch.context() as m:  # every row of each window, as before
            m.setattr(dae_windows, "_back_band", lambda *_: INF)
            whole = cut_rows(ref, optional, items, cuts, e0, compiled)
        assert banded == whole, case


def test_written_edits_bound_the_written_distance_and_cut_the_same(monkeypatch) -> None:
    rng = random.Random(11)
    monkeypatch.setattr(dae_windows, "_PIECES_FROM", 0)  # pieces on every pair
    gaps, pieces = [], 0
    for case in range(40):
        vocab = rng.choice((3, 50, 2000))
        ref, optional, items = _pair(rng, rng.choice((0, 5, 400, 3000)), vocab, 0.2)
        written = _written(items)
        exact = levenshtein(ref, written) if len(ref) and len(written) else len(ref) + len(written)
        got = written_edits(ref, written)
        assert got >= exact, case
        gaps.append(got - exact)
        pieces += len(_anchor_cells(ref, written))
        if items and len(ref):
            cuts = _cuts(items, 16)
            assert cut_rows(ref, optional, items, cuts, got) == cut_rows(
                ref, optional, items, cuts, exact
            ), case
    assert sum(gaps) == 0  # (on these seeded pairs the pieces' alignment is optimal)
    assert pieces > 20  # (and the pairs were cut)
    monkeypatch.setattr(dae_windows, "_PIECES_FROM", 1 << 14)
    ref, _, items = _pair(random.Random(3), 2000, 200, 0.2)
    assert written_edits(ref, _written(items)) == levenshtein(ref, _written(items))


def _numpys_anchor_cells(ref: np.ndarray, plain: np.ndarray) -> list[tuple[int, int]]:
    """`_anchor_cells` by np.unique's indices and np.intersect1d (the stable sorts)."""
    hyp_keys, ref_keys = _gram_keys(plain), _gram_keys(np.asarray(ref, dtype=np.int64))
    if not len(hyp_keys) or not len(ref_keys):
        return []

    def once(keys: np.ndarray, valid: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        at = np.flatnonzero(valid)
        uniq, first, count = np.unique(keys[at], return_index=True, return_counts=True)
        return uniq[count == 1], at[first[count == 1]]

    windows = np.lib.stride_tricks.sliding_window_view(plain, dae_windows._GRAM)
    hk, hp = once(hyp_keys, np.asarray((windows >= 0).all(axis=1)))
    rk, ri = once(ref_keys, np.ones(len(ref_keys), dtype=bool))
    _, a, b = np.intersect1d(rk, hk, assume_unique=True, return_indices=True)
    order = np.argsort(ri[a])
    i, p = ri[a][order], hp[b][order]
    sure = np.flatnonzero((i[1:] == i[:-1] + 1) & (p[1:] == p[:-1] + 1))
    i, p = i[sure], p[sure]
    _, every = np.unique(i // dae_windows._CHUNK, return_index=True)
    cells: list[tuple[int, int]] = []
    for row, item in zip(i[every].tolist(), p[every].tolist(), strict=True):
        if row > 0 and (not cells or (row > cells[-1][0] and item > cells[-1][1])):
            cells.append((row, item))
    return cells


def test_anchor_cells_are_numpys_set_operations() -> None:
    rng = np.random.default_rng(1)
    found = 0
    for case in range(400):
        vocab, n, m = (
            int(rng.integers(2, 60)),
            int(rng.integers(0, 2500)),
            int(rng.integers(0, 2500)),
        )
        ref, hyp = rng.integers(0, vocab, n), rng.integers(-1, vocab, m)
        if case % 2:  # mostly the reference: matches found once on each side
            k = min(n, m)
            hyp[:k] = np.where(rng.random(k) < 0.9, ref[:k], hyp[:k])
        got = _anchor_cells(ref, hyp)
        assert got == _numpys_anchor_cells(ref, hyp), case
        found += len(got)
    assert found > 100


def test_distinct_is_numpys_unique() -> None:
    rng = np.random.default_rng(2)
    for _ in range(500):
        ids = rng.integers(-3, 40, int(rng.integers(0, 30)))
        got = _distinct(ids)
        assert got.dtype == np.int64
        assert got.tolist() == np.unique(ids).tolist()


def test_a_long_pairs_windows_import_neither_openfst_nor_numpy_ma() -> None:
    code = textwrap.dedent(
        """
        import importlib.util, sys
        spec = importlib.util.spec_from_file_location("s", "benchmarks/scoring_scale.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        from scoring import dae_windows
        from scoring.scorer import Scorer, ScorerConfig
        dae_windows._PRUNE_CELLS = 0  # the bound's gadget on this short pair too
        seen = []
        original = Scorer._windowed
        def windowed(self, *args, **kwargs):
            seen.append(1)
            return original(self, *args, **kwargs)
        Scorer._windowed = windowed
        refs, hyps = module.long_pair(3000)
        Scorer(ScorerConfig(nsw=False, bootstrap=0)).utterances(refs, hyps)
        print(len(seen), "pywrapfst" in sys.modules, "numpy.ma" in sys.modules)
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO_ROOT, capture_output=True, text=True, check=True
    )
    assert out.stdout.split() == ["1", "False", "False"]
