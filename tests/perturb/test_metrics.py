"""WERD, NWERD normalisers, Aurora average accuracy and severity curves."""

from __future__ import annotations

import pytest

from asrbench.perturb import metrics


def test_werd_and_nwerd():
    assert metrics.werd(0.30, 0.10) == pytest.approx(0.20)
    assert metrics.nwerd(0.30, 0.10, 0.5) == pytest.approx(0.40)
    assert metrics.nwerd(0.30, 0.10, 0.0) is None


def test_quality_normaliser_scales_by_degradation():
    norm = metrics.quality_normaliser(4.0, {"a": 3.0, "b": 1.0, "c": None})
    assert norm("a") == pytest.approx(0.25) and norm("b") == pytest.approx(0.75)
    assert norm("c") is None and norm("missing") is None
    rows = metrics.robustness_rows(0.1, {"a": 0.2, "b": 0.4}, norm)
    # Same WERD per unit of difficulty: b hurts more but is also a harder condition.
    assert rows[0]["nwerd"] == pytest.approx(0.4) and rows[1]["nwerd"] == pytest.approx(0.4)


def test_base_model_normaliser():
    norm = metrics.base_model_normaliser(0.05, {"a": 0.25, "b": 0.05})
    assert norm("a") == pytest.approx(0.20)
    assert norm("b") == pytest.approx(1e-3)  # floored: base model untouched by b


def test_aurora_average_needs_complete_sets():
    wers = {}
    for noise in ("subway", "babble", "car", "exhibition"):
        for snr in (20.0, 15.0, 10.0, 5.0, 0.0, -5.0):
            wers[("A", noise, snr)] = 0.1 if snr >= 10 else 0.5
    wers[("C", "subway", 20.0)] = 0.0  # C incomplete: not reported
    acc = metrics.aurora_average_accuracy(wers)
    assert set(acc) == {"A"}
    assert acc["A"] == pytest.approx((3 * 90 + 2 * 50) / 5)  # -5 dB excluded


def test_severity_curves_sorted_per_model():
    rows = [
        {"model": "m", "perturbation": "echo", "severity": 2, "wer": 0.3},
        {"model": "m", "perturbation": "echo", "severity": 1, "wer": 0.2},
        {"model": "m", "perturbation": "gsm", "severity": None, "wer": 0.2},
    ]
    assert metrics.severity_curves(rows) == {"m": {"echo": [(1, 0.2), (2, 0.3)]}}


def test_markdown_table():
    md = metrics.markdown_table([{"a": 0.12345, "b": None}], ["a", "b"])
    assert md.splitlines()[2] == "| 0.123 | - |"
