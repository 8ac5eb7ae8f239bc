"""SRB robustness disparity on planted severity curves."""

from __future__ import annotations

import numpy as np
import pytest

from asrbench.fairness.robustness import Condition, robustness_disparity
from tests.fairness import synth

SPK = {**{f"f{i}": "F" for i in range(5)}, **{f"m{i}": "M" for i in range(5)}}
CONDS = [Condition("clean", "clean", 0)] + [
    Condition(f"av_noise:{s}", "av_noise", s) for s in range(1, 6)
]


def _grid(f_rate, m_rate):
    """Errors per 100 words: F utterances follow f_rate(s), M ones m_rate(s)."""
    g = synth.grouping(SPK, 3)
    is_f = np.array([i.startswith("f") for i in g.ids])
    err = np.stack([np.where(is_f, f_rate(c.severity), m_rate(c.severity)) for c in CONDS], 1)
    return g, err, np.full(err.shape, 100)


def test_a_gap_growing_with_severity_has_the_planted_slope():
    g, err, den = _grid(lambda s: 10 + 5 * s, lambda s: 10 + s)
    out = robustness_disparity(
        g, CONDS, err, den, base=g.index("M"), compares=[g.index("F")], reps=100, perms=10000
    )
    (slope,) = out["slopes"]
    assert slope["slope"] == pytest.approx(0.04)  # (5 - 1) points per step, in rate units
    assert slope["severities"] == [0, 1, 2, 3, 4, 5]
    assert slope["ci"]["low"] == pytest.approx(0.04) == slope["ci"]["high"]
    assert slope["exact"] and slope["p_value"] == pytest.approx(2 / 252)
    gaps = {r["severity"]: r for r in out["gaps"]}
    assert gaps[0]["gap"] == pytest.approx(0.0) and gaps[5]["gap"] == pytest.approx(0.2)
    assert gaps[3]["werd_gap"] == pytest.approx(0.12)
    assert gaps[5]["lwerr"] == pytest.approx(np.log2(35 / 15))
    werd = {(r["group"], r["severity"]): r["werd"] for r in out["groups"]}
    assert werd[("F", 4)] == pytest.approx(0.2) and werd[("M", 4)] == pytest.approx(0.04)


def test_fair_under_noise_means_a_flat_gap():
    g, err, den = _grid(lambda s: 20 + 3 * s, lambda s: 10 + 3 * s)  # gap 0.1 everywhere
    out = robustness_disparity(
        g, CONDS, err, den, base=g.index("M"), compares=[g.index("F")], reps=50, perms=500
    )
    (slope,) = out["slopes"]
    assert slope["slope"] == pytest.approx(0.0, abs=1e-12)
    assert slope["p_value"] == pytest.approx(1.0)
    assert all(r["werd_gap"] == pytest.approx(0.0, abs=1e-12) for r in out["gaps"])


def test_the_clean_condition_must_come_first():
    g, err, den = _grid(lambda s: 1, lambda s: 1)
    with pytest.raises(ValueError):
        robustness_disparity(g, CONDS[::-1], err, den, base=0, compares=[1])
