"""One rule for an empty denominator in every bootstrap (scorer and fairness): undefined, never
0, which would read as a perfect score."""

from __future__ import annotations

import math

import numpy as np
import pytest

from scoring.errors import ScoringError
from scoring.stats import bootstrap_ci, bootstrap_metrics, interval, paired_bootstrap, ratio


def test_a_rate_over_no_reference_word_is_undefined() -> None:
    r = ratio(np.array([1.0, 0.0, 3.0]), np.array([2.0, 0.0, 0.0]))
    assert r[0] == 0.5 and math.isnan(r[1]) and math.isnan(r[2])


def test_a_replicate_of_empty_references_is_left_out_not_scored_zero() -> None:
    """Two utterances, one with no reference word: a quarter of the replicates draw it twice.
    Every defined replicate has TER 0.5; scoring those as 0 would put the low bound at 0."""
    ci = bootstrap_ci([1, 0], [2, 0], reps=1000, seed=0)
    assert ci["low"] == ci["high"] == 0.5
    assert 150 < ci["undefined"] < 350 and ci["replicates"] == 1000


def test_no_reference_word_at_all_has_no_interval() -> None:
    assert bootstrap_ci([1, 2], [0, 0], reps=100)["low"] is None
    cis = bootstrap_metrics([1, 2], [0, 0], [0, 0], reps=100)
    assert cis["ter"]["low"] is None and cis["mter"]["low"] is None
    with pytest.raises(ScoringError, match="undefined"):
        paired_bootstrap([1, 2], [0, 1], [0, 0], reps=100)


def test_the_fairness_analyses_use_the_same_rule() -> None:
    from asrbench.fairness import stats as fairness_stats

    assert fairness_stats.ratio is ratio
    reps = np.array([0.2, np.nan, 0.4, 0.3])
    assert fairness_stats.interval(reps, 0.9, point=0.3) == interval(reps, 0.9)
    assert fairness_stats.interval(reps, 0.9, point=float("nan"))["low"] is None
    assert interval(reps, 0.9)["undefined"] == 1
