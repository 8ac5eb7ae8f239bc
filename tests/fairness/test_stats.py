"""The statistics under the fairness analyses, against answers known by construction."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from asrbench.fairness import stats
from asrbench.fairness.accuracy import fit, omnibus_test
from asrbench.fairness.stats import Units
from tests.fairness import synth


def test_bootstrap_draws_each_group_from_its_own_units():
    units = Units(np.array([0, 0, 0, 1, 1]), 2, "speaker")
    values = np.array([[1.0, 10], [1, 10], [1, 10], [5, 10], [7, 10]])
    out = stats.bootstrap_sums(units, values, 500, np.random.default_rng(0))
    assert out.shape == (500, 2, 2)
    assert np.all(out[:, 0] == [3, 30])  # identical units: every replicate the same
    assert np.all(out[:, 1, 1] == 20)  # two draws of 10 words each
    assert set(np.unique(out[:, 1, 0])) == {10.0, 12.0, 14.0}  # 5+5, 5+7, 7+7 only


def test_bootstrap_in_blocks_equals_the_distribution(monkeypatch):
    """Blocks of replicates (memory bound) do not change what is drawn, only how."""
    units = Units(np.zeros(50, dtype=np.int64), 1, "utterance")
    vals = np.arange(50.0)
    full = stats.bootstrap_sums(units, vals, 64, np.random.default_rng(3))
    monkeypatch.setattr(stats, "BLOCK_CELLS", 100)
    blocked = stats.bootstrap_sums(units, vals, 64, np.random.default_rng(3))
    assert full.shape == blocked.shape == (64, 1)
    assert np.all(blocked.sum(axis=1) >= 0) and abs(blocked.mean() - full.mean()) < 150


def test_relabellings_are_enumerated_exactly_when_few():
    assert stats.n_relabellings([2, 1, 2, 1]) == 180  # fsdd_accents' ACCENT groups
    assert stats.n_relabellings([5, 5]) == 252
    rel = stats.label_matrix(np.array([0, 0, 1, 1]), 2, 100, np.random.default_rng(0))
    assert rel.exact and rel.n == 6
    assert {tuple(r) for r in rel.labels} == {
        tuple(int(i not in c) for i in range(4)) for c in itertools.combinations(range(4), 2)
    }
    assert all(np.bincount(r).tolist() == [2, 2] for r in rel.labels)
    rnd = stats.label_matrix(np.repeat([0, 1], 10), 2, 100, np.random.default_rng(0))
    assert not rnd.exact and rnd.n == 100
    assert all(np.bincount(r).tolist() == [10, 10] for r in rnd.labels)


def test_p_values_exact_and_random():
    null = np.array([0.0, 1, 2, 3])
    assert stats.p_value(null, 3.0, exact=True) == 0.25
    assert stats.p_value(null, 3.0, exact=False) == pytest.approx(2 / 5)
    assert stats.p_value(null, np.nan, exact=True) is None


def test_group_sums_match_a_loop():
    rng = np.random.default_rng(1)
    labels = rng.integers(0, 3, size=(7, 11))
    vals = rng.random((11, 2))
    out = stats.group_sums(labels, vals, 3)
    for p in range(7):
        for g in range(3):
            assert np.allclose(out[p, g], vals[labels[p] == g].sum(axis=0))


def test_holm_and_benjamini_hochberg_by_hand():
    p = [0.01, 0.04, None, 0.03]
    assert stats.holm(p) == pytest.approx([0.03, 0.06, None, 0.06])
    q = stats.benjamini_hochberg([0.01, 0.04, 0.03, 0.5])
    assert q == pytest.approx([0.04, 0.04 * 4 / 3, 0.04 * 4 / 3, 0.5])


def _exchangeable(seed: int, n_groups: int, n_speakers: int = 20):
    """Speakers whose error rates are drawn from one distribution, whatever their group."""
    rng = np.random.default_rng(seed)
    spk = {f"s{i}": f"g{i % n_groups}" for i in range(n_speakers)}
    g = synth.grouping(spk, 6)
    p = np.repeat(rng.beta(2, 8, n_speakers), 6)
    n_ref = rng.integers(5, 15, len(p))
    return g, synth.counts(rng.binomial(n_ref, p), n_ref)


@pytest.mark.parametrize("n_groups", [2, 3])
def test_permutation_test_keeps_its_level_on_exchangeable_groups(n_groups):
    """No planted difference: over 400 datasets the test rejects at about its nominal rate."""
    pvals = []
    for seed in range(400):
        g, c = _exchangeable(seed, n_groups)
        f = fit(g, c, reps=1, perms=199, seed=seed)
        pvals.append(omnibus_test(f, "level")["p_value"])
    pvals = np.array(pvals)
    # nominal 5 %: 20 of 400 expected, binomial sd 4.4; allow about +/- 3 sd
    assert 0.02 <= np.mean(pvals <= 0.05) <= 0.085
    assert 0.14 <= np.mean(pvals <= 0.20) <= 0.26


def test_permutation_test_rejects_a_planted_difference():
    rng = np.random.default_rng(7)
    spk = {f"s{i}": ("A" if i < 10 else "B") for i in range(20)}
    g = synth.grouping(spk, 6)
    p = np.repeat(np.where(np.arange(20) < 10, 0.3, 0.1), 6)
    n_ref = rng.integers(5, 15, len(p))
    f = fit(g, synth.counts(rng.binomial(n_ref, p), n_ref), reps=1, perms=999)
    t = omnibus_test(f, "power")
    assert t["p_value"] < 0.01 and t["n_units"] == 20 and t["unit"] == "speaker"
