"""The DAE lattice's DP compiled (scoring/_dp.pyx) against its numpy path (scoring/dae_windows.py,
the fallback where the extension is not built): the same columns cell for cell, the same kept
bands and the same cut rows, on seeded random lattices with ties (a vocabulary of 4 tokens),
slots of several branches (strict tokens, empty branches), optional reference words and empty
sides, banded both ways (the forward pass's `upper`, the backward pass's `e0`)."""

from __future__ import annotations

import random

import numpy as np
import pytest

from scoring import dae_windows
from scoring.dae_windows import Item, Weights, _Lattice, _Ref, cut_rows, plan_cuts

pytestmark = pytest.mark.skipif(
    dae_windows._dp is None, reason="scoring/_dp.pyx not built (pip install -e ., make ext)"
)


def _items(rng: random.Random, n: int, vocab: int, slots: float) -> list[Item]:
    """n items: plain token ids, or slots of 2-3 branches of 0-3 tokens, some strict but
    the first (the written form, always a path: scoring.dae's slots)."""
    out: list[Item] = []
    for _ in range(n):
        if rng.random() >= slots:
            out.append(rng.randrange(vocab))
            continue
        branches = []
        for b in range(rng.randint(2, 3)):
            k = rng.randint(0 if rng.random() < 0.1 else 1, 3)
            ids = np.array([rng.randrange(vocab) for _ in range(k)], dtype=np.int64)
            strict = np.array([b > 0 and rng.random() < 0.3 for _ in range(k)], dtype=bool)
            branches.append((ids, strict))
        out.append(tuple(branches))
    return out


def _case(rng: random.Random) -> tuple[np.ndarray, np.ndarray | None, list[Item]]:
    vocab = rng.choice((2, 4, 30))
    ref = np.array([rng.randrange(vocab) for _ in range(rng.choice((0, 1, 5, 40, 300)))])
    optional = None
    if len(ref) and rng.random() < 0.3:
        optional = np.array([rng.random() < 0.15 for _ in ref], dtype=bool)
    n_items = rng.choice((0, 1, 7, 50, 400))
    return ref, optional, _items(rng, n_items, vocab, rng.choice((0.0, 0.05, 0.3)))


def _longest(items: list[Item]) -> int:
    return sum(1 if isinstance(x, int) else max(len(b[0]) for b in x) for x in items)


def _both(lattice: _Lattice, items: list[Item], keep: frozenset[int]) -> None:
    got = {}
    for compiled in (True, False):
        lattice.compiled = compiled
        got[compiled] = lattice.run(items, keep)
    (col_c, kept_c), (col_n, kept_n) = got[True], got[False]
    assert col_c.tolist() == col_n.tolist()
    assert sorted(kept_c) == sorted(kept_n) == sorted(keep)
    for p in keep:
        assert kept_c[p][0] == kept_n[p][0]
        assert kept_c[p][1].tolist() == kept_n[p][1].tolist()


def test_lattice_columns_are_numpys_cell_for_cell() -> None:
    rng = random.Random(43)
    for _ in range(300):
        ref, optional, items = _case(rng)
        w = Weights.for_pair(len(ref), _longest(items))
        r = _Ref.make(ref, optional, w)
        e0 = rng.randint(0, len(ref) + 3)
        keep = frozenset(rng.sample(range(len(items)), min(len(items), 6)))
        _both(_Lattice(r, w, e0), items, keep)  # banded by e0, every item (the backward pass)
        upper = rng.randint(0, e0 + 2) * w.e + rng.randint(0, w.e - 1)
        _both(_Lattice(r, w, e0, upper), items, keep)  # banded by `upper` (the forward pass)


def test_cut_rows_are_the_same_compiled_or_not() -> None:
    rng = random.Random(7)
    for _ in range(150):
        ref, optional, items = _case(rng)
        if not items:
            continue
        readings = [1 if isinstance(x, int) else len(x) for x in items]
        cuts = plan_cuts(readings, rng.choice((4, 16)), rng.choice((8, 64, 256)))
        # e0: the written hypothesis's edit distance bounds the optimum; the whole length
        # of both sides bounds it too (what a caller without the distance may pass)
        e0 = len(ref) + _longest(items)
        compiled = cut_rows(ref, optional, items, cuts, e0, compiled=True)
        assert compiled == cut_rows(ref, optional, items, cuts, e0, compiled=False)


def test_window_combinations_are_numpys() -> None:
    # `best_combination`'s halves: every combination's last column, and the winner
    rng = random.Random(11)
    for _ in range(200):
        vocab = rng.choice((2, 4, 30))
        ref = np.array([rng.randrange(vocab) for _ in range(rng.randint(0, 30))], dtype=np.int64)
        n_slots = rng.randint(1, 4)
        runs = [
            np.array([rng.randrange(vocab) for _ in range(rng.randint(0, 5))], dtype=np.int64)
            for _ in range(n_slots + 1)
        ]
        slots = [list(x) for x in _items(rng, n_slots, vocab, 1.0)]  # type: ignore[arg-type]
        longest = sum(map(len, runs)) + sum(max(len(b[0]) for b in s) for s in slots)
        w = Weights.for_pair(len(ref), longest)
        for first in (True, False):
            for h in range(n_slots + 1):
                args = (ref[::-1] if first else ref, runs[: h + 1], slots[:h], w, first)
                compiled = dae_windows._half(*args, True)
                assert compiled.tolist() == dae_windows._half(*args, False).tolist()
        got = dae_windows.best_combination(ref, runs, slots, compiled=True)
        assert got == dae_windows.best_combination(ref, runs, slots, compiled=False)


# Scores a long pair with DAE slots where scoring._dp cannot be imported (as on an install
# without a C compiler): the numpy path is chosen by itself; prints its alignment.
_WITHOUT = """
import json, sys
sys.modules["scoring._dp"] = None  # import scoring._dp now raises ImportError
from scoring import Scorer, ScorerConfig, align, dae_windows
assert dae_windows._dp is None and align._dp is None and not align.COMPILED
ref, hyp = json.loads(sys.stdin.read())
u = Scorer(ScorerConfig(nsw=False, bootstrap=0)).score({"u": ref}, {"u": hyp}).utterances[0]
print(json.dumps([u.sub, u.dele, u.ins, u.ops, u.alternatives]))
"""


def test_without_the_extension_the_numpy_path_is_chosen_and_scores_the_same() -> None:
    import json
    import subprocess
    import sys

    from asrbench.settings import REPO_ROOT
    from scoring import Scorer, ScorerConfig

    rng = random.Random(1)
    forms = [("i am", "i'm"), ("going to", "gonna"), ("do not", "don't"), ("it is", "it's")]
    words = "the of and to a in is was he for".split()
    ref, hyp = [], []
    for _ in range(600):
        if rng.random() < 0.3:
            a, b = rng.choice(forms)
            ref.append(a)
            hyp.append(b if rng.random() < 0.6 else a)
        else:
            w = rng.choice(words)
            ref.append(w)
            hyp.append(w if rng.random() > 0.15 else rng.choice(words))
    pair = [" ".join(ref), " ".join(hyp)]
    run = subprocess.run(
        [sys.executable, "-c", _WITHOUT],
        input=json.dumps(pair),
        capture_output=True,
        text=True,
        cwd=REPO_ROOT,
        env={"PYTHONPATH": str(REPO_ROOT), "PATH": "/usr/bin:/bin"},
        timeout=600,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    u = Scorer(ScorerConfig(nsw=False, bootstrap=0)).score({"u": pair[0]}, {"u": pair[1]})
    got = u.utterances[0]
    assert len(got.alternatives) > 50  # DAE took alternatives: the windows' path ran
    want = [got.sub, got.dele, got.ins, got.ops, got.alternatives]
    assert json.loads(run.stdout) == json.loads(json.dumps(want))
