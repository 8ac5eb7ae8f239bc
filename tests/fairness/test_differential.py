"""AequeVox differential testing: the published formula, planted violations, the tau curve."""

from __future__ import annotations

import numpy as np
import pytest

from asrbench.fairness.differential import differential
from asrbench.fairness.tokens import Vocab, edit_distance
from tests.fairness import synth


def _lev(a: list[str], b: list[str]) -> int:
    """Plain Levenshtein distance (what nltk.edit_distance computes with unit costs)."""
    prev = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        cur = [i]
        for j, y in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (x != y)))
        prev = cur
    return prev[-1]


def test_edit_distance_matches_plain_levenshtein():
    rng = np.random.default_rng(0)
    words = list("abcdefg")
    a = [list(rng.choice(words, rng.integers(0, 12))) for _ in range(300)]
    b = [list(rng.choice(words, rng.integers(0, 12))) for _ in range(300)]
    v = Vocab()
    got = edit_distance(v.table(a), v.table(b))
    assert got.tolist() == [_lev(x, y) for x, y in zip(a, b, strict=True)]


SPK = {"a1": "A", "a2": "A", "a3": "A", "b1": "B", "b2": "B", "b3": "B"}


def _planted():
    """Group A's two recognisers agree on the original and drift apart with severity;
    group B's agree everywhere except a constant one-word difference."""
    g = synth.grouping(SPK, 2)
    is_a = np.array([i.startswith("a") for i in g.ids])
    n = len(g.ids)
    dist = {"orig": np.where(is_a, 0, 1)}
    longer = {"orig": np.full(n, 10)}
    for s in (1, 2, 3):
        dist[f"n:{s}"] = np.where(is_a, 2 * s, 1)
        longer[f"n:{s}"] = np.full(n, 10)
    return g, dist, longer


def test_planted_degradation_gives_violations_for_the_base_that_degrades():
    g, dist, longer = _planted()
    out = differential(
        g,
        {"n": [(1, "n:1"), (2, "n:2"), (3, "n:3")]},
        dist,
        longer,
        "orig",
        tau=0.1,
        reps=100,
        perms=1000,
    )
    d = {(r["group"], r["severity"]): r["d"] for r in out["d"]}
    assert d[("A", None)] == 0.0 and d[("B", None)] == pytest.approx(0.1)
    assert d[("A", 3)] == pytest.approx(0.6) and d[("B", 3)] == pytest.approx(0.1)
    deg = {(r["group"], r["severity"]): r["D"] for r in out["degradation"]}
    assert deg[("A", 2)] == pytest.approx(0.4) and deg[("B", 2)] == pytest.approx(0.0)
    pairs = {(r["base"], r["severity"]): r for r in out["pairs"]}
    # D_A - D_B = 0.2, 0.4, 0.6: above tau = 0.1 at every severity, for base A only
    assert [pairs[("A", s)]["delta"] for s in (1, 2, 3)] == pytest.approx([0.2, 0.4, 0.6])
    assert all(pairs[("A", s)]["violation"] for s in (1, 2, 3))
    assert not any(pairs[("B", s)]["violation"] for s in (1, 2, 3))
    counts = {r["base"]: r for r in out["violations"]}
    assert counts["A"]["violations"] == 3 and counts["B"]["violations"] == 0
    assert counts["A"]["comparisons"] == 3 and counts["A"]["by_transformation"] == {"n": 3}
    # identical speakers within each group: the interval is the point, so it clears tau too
    assert counts["A"]["violations_ci"] == 3
    # 3 + 3 speakers: 20 relabellings (exact); only the observed split puts all of A's
    # drift on one side
    assert pairs[("A", 3)]["exact"] and pairs[("A", 3)]["p_value"] == pytest.approx(1 / 20)
    assert pairs[("B", 3)]["p_value"] == pytest.approx(1.0)
    curve = {r["base"]: r for r in out["tau_curve"]}["A"]
    at = dict(zip(curve["taus"], curve["violations"], strict=True))
    assert at[0.0] == at[0.19] == 3 and at[0.3] == 2 and at[0.5] == 1
    assert np.all(np.diff(curve["violations"]) <= 0)


def test_the_published_ratio_of_sums_not_a_mean_of_ratios():
    """d pools distances over lengths (compASR.py): a one-word utterance does not dominate."""
    g = synth.grouping({"a1": "A", "b1": "B"}, 2, min_speakers=1, min_utts=1)
    dist = {"o": np.array([1, 0, 0, 0]), "t:1": np.array([1, 10, 0, 0])}
    longer = {"o": np.array([1, 20, 5, 5]), "t:1": np.array([1, 20, 5, 5])}
    out = differential(g, {"t": [(1, "t:1")]}, dist, longer, "o", reps=10, perms=10)
    d = {(r["group"], r["condition"]): r["d"] for r in out["d"]}
    assert d[("A", "o")] == pytest.approx(1 / 21) and d[("A", "t:1")] == pytest.approx(11 / 21)


def test_single_recogniser_variant_takes_d_on_the_original_as_zero():
    g, dist, longer = _planted()
    out = differential(g, {"n": [(3, "n:3")]}, dist, longer, None, tau=0.1, reps=10, perms=100)
    deg = {(r["group"], r["severity"]): r["D"] for r in out["degradation"]}
    assert deg[("A", 3)] == pytest.approx(0.6) and deg[("B", 3)] == pytest.approx(0.1)
    assert not any(r["condition"] == "orig" for r in out["d"])
    assert {r["base"]: r["violations"] for r in out["violations"]} == {"A": 1, "B": 0}


def test_every_group_is_the_base_in_turn_with_q_values():
    spk = {f"{k}{i}": k for k in "ABC" for i in range(3)}
    g = synth.grouping(spk, 2)
    n = len(g.ids)
    grp = np.array([i[0] for i in g.ids])
    dist = {"o": np.zeros(n), "t:1": np.select([grp == "A", grp == "B"], [5, 2], 0)}
    longer = {"o": np.full(n, 10), "t:1": np.full(n, 10)}
    out = differential(g, {"t": [(1, "t:1")]}, dist, longer, "o", tau=0.1, reps=10, perms=100)
    assert {(r["base"], r["other"]) for r in out["pairs"]} == {
        (a, b) for a in "ABC" for b in "ABC" if a != b
    }
    assert {r["base"]: r["violations"] for r in out["violations"]} == {"A": 2, "B": 1, "C": 0}
    assert all(r["q_value"] >= r["p_value"] for r in out["pairs"])
