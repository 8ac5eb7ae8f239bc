"""Long utterances: the row-by-row aligner gives the batched aligner's ops, and aligning a
10,000-word and a 30,000-word pair stays within a small, measured memory (a subprocess each)."""

from __future__ import annotations

import json
import random
import subprocess
import sys

import numpy as np
import pytest

from scoring import align
from scoring.align import INFEASIBLE, Marks, align_arrays, align_batch
from tests.scoring.test_core import _reference_alignment

# Peak RSS allowed for the whole subprocess (interpreter and numpy included, ~35 MB alone):
# before, the 10,000-word pair took ~1 GB and a 30,000-word pair would have needed ~9 GB.
RSS_LIMIT_MB = {10_000: 120, 30_000: 160}

# A pair with a known alignment: distinct reference words; in each block of ten, word 3 is
# substituted (a fresh word) and word 6 deleted, and every fourth block gets a fresh word
# inserted after its word 0. No deletion touches an insertion, so no edit can be merged with
# another: E = S + D + I exactly, and the split is the only one with that E.
PAIR = """
def pair(n):
    ref = list(range(6, 6 + n))
    hyp, fresh, counts = [], 6 + n, [0, 0, 0]
    for i, w in enumerate(ref):
        if i % 10 == 3:
            hyp.append(fresh); fresh += 1; counts[0] += 1
        elif i % 10 == 6:
            counts[1] += 1
        elif i % 10 == 0 and (i // 10) % 4 == 0:
            hyp += [w, fresh]; fresh += 1; counts[2] += 1
        else:
            hyp.append(w)
    return ref, hyp, counts
"""
namespace: dict = {}
exec(PAIR, namespace)
pair = namespace["pair"]


def test_known_pair_matches_the_reference_dp() -> None:
    # The generator's counts are what a plain dynamic programme finds (a shorter case).
    ref, hyp, counts = pair(600)
    codes, cost = _reference_alignment(ref, hyp, 602)
    assert [codes.count("S"), codes.count("D"), codes.count("I")] == counts
    assert align_batch([(ref, hyp)], 602) == ([codes], [cost])


@pytest.mark.parametrize(("row_cells", "long_cells"), [(10, 1 << 22), (10, 50), (10, 7)])
def test_row_by_row_aligner_equals_the_batched_one(
    monkeypatch, row_cells: int, long_cells: int
) -> None:
    # Every pair through the long path (whole table, then only every s-th row kept): the
    # same ops and costs as the batched path, with strict and optional flags too.
    pairs = _random_flagged_pairs(row_cells + long_cells)
    batched = _align_flagged(pairs)
    monkeypatch.setattr(align, "_ROW_CELLS", row_cells)
    monkeypatch.setattr(align, "_LONG_CELLS", long_cells)
    rows = _align_flagged(pairs)
    _assert_same_feasible(rows, batched)


def _random_flagged_pairs(seed: int, n: int = 200) -> list[tuple[list, list, list, list]]:
    rng = random.Random(seed)
    pairs = []
    for _ in range(n):
        r = [6 + rng.randrange(6) for _ in range(rng.randint(0, 40))]
        h = [6 + rng.randrange(6) for _ in range(rng.randint(0, 40))]
        pairs.append((r, h, [rng.random() < 0.1 for _ in h], [rng.random() < 0.1 for _ in r]))
    return pairs


def _align_flagged(pairs: list[tuple[list, list, list, list]]) -> tuple[list[str], list[int]]:
    def flat(i: int) -> np.ndarray:
        return np.array([x for p in pairs for x in p[i]], dtype=np.int64)

    lens = [np.array([len(p[i]) for p in pairs]) for i in (0, 1)]
    offs = [np.concatenate([[0], np.cumsum(x)[:-1]]) for x in lens]
    codes, costs = align_arrays(
        flat(0),
        offs[0],
        lens[0],
        flat(1),
        offs[1],
        lens[1],
        60,
        Marks(flat(2).astype(bool), flat(3).astype(bool)),
    )
    return codes, costs.tolist()


def _assert_same_feasible(got: tuple[list[str], list[int]], want: tuple[list[str], list[int]]):
    assert got[1] == want[1]
    feasible = [c != INFEASIBLE for c in want[1]]
    assert any(feasible) and not all(feasible)
    assert [c for c, f in zip(got[0], feasible, strict=True) if f] == [
        c for c, f in zip(want[0], feasible, strict=True) if f
    ]


@pytest.mark.parametrize("flags", [True, False])
def test_narrow_batches_give_the_wide_batches_ops(monkeypatch, flags: bool) -> None:
    # A narrow batch (DAE windows: tens of pairs) takes each row's running minimum in one
    # accumulate, restarted after strict tokens; a wide one column by column. Same ops, costs.
    pairs = _random_flagged_pairs(7)
    if not flags:
        pairs = [(r, h, [False] * len(h), [False] * len(r)) for r, h, _, _ in pairs]
    monkeypatch.setattr(align, "_NARROW", 0)
    wide = _align_flagged(pairs)
    monkeypatch.setattr(align, "_NARROW", 10_000)
    narrow = _align_flagged(pairs)
    if flags:
        _assert_same_feasible(narrow, wide)
    else:
        assert narrow == wide


MEASURE = (
    PAIR
    + """
import json, sys, time

def peak_rss_mb():
    # VmHWM: this process image's peak resident set. (getrusage's ru_maxrss would include
    # the parent's size at fork: Linux keeps it across exec.)
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) // 1024

from scoring.align import align_batch
from scoring import Scorer, ScorerConfig
n = int(sys.argv[1])
ref, hyp, counts = pair(n)
t = time.perf_counter()
codes, _ = align_batch([(ref, hyp)], n + n // 40 + 2)
seconds = time.perf_counter() - t
c = codes[0]
scorer = counts
if n <= 10_000:  # the whole scorer too (its alignment again: time)
    words = {i: f"w{i}" for i in set(ref) | set(hyp)}
    res = Scorer(ScorerConfig(nsw=False, dae=False, bootstrap=10)).score(
        {"u": " ".join(map(words.get, ref))}, {"u": " ".join(map(words.get, hyp))})
    u = res.utterances[0]
    scorer = [u.sub, u.dele, u.ins]
print(json.dumps({"counts": [c.count("S"), c.count("D"), c.count("I")], "expected": counts,
                  "scorer": scorer, "seconds": round(seconds, 2),
                  "max_rss_mb": peak_rss_mb()}))
"""
)


@pytest.mark.parametrize("n", [10_000, 30_000])
def test_long_pair_memory(n: int) -> None:
    proc = subprocess.run(
        [sys.executable, "-c", MEASURE, str(n)],
        capture_output=True,
        text=True,
        check=True,
        timeout=600,
    )
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    print(f"{n} words: {got}")
    assert got["counts"] == got["expected"] == got["scorer"]
    assert got["max_rss_mb"] < RSS_LIMIT_MB[n], got
