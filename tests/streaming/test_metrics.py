"""Streaming metrics on hand-made timelines whose values are worked out in the comments."""

from __future__ import annotations

import pytest

from asrbench.streaming import metrics
from asrbench.streaming.feed import FedUtterance
from asrbench.streaming.framing import Event


def _ev(kind: str, text: str, audio: float, recv: float, sent: float | None = None) -> Event:
    return Event(kind, "u", text, audio, sent, 1000.0 + recv, recv)


# t0 = 100.0; five 100-ms chunks sent exactly on time at 100.1 ... 100.5 (0.5 s of audio).
SENDS = [100.1, 100.2, 100.3, 100.4, 100.5]
FED = FedUtterance(
    "u",
    0.5,
    0.1,
    100.0,
    SENDS,
    [0.0, 0.002, 0.0, 0.02, 0.001],
    [
        _ev("partial", "", 0.1, 100.15),  # empty: not a first partial
        _ev("partial", "The", 0.2, 100.25, 1100.249),
        _ev("partial", "the cat", 0.3, 100.35),
        _ev("partial", "the hat sat", 0.4, 100.45),
        _ev("final", "The hat, sat.", 0.5, 100.7, 1100.69),
    ],
)


def test_first_partial_and_end_of_speech_latency():
    assert metrics.first_partial_s(FED) == pytest.approx(0.25)  # 100.25 - t0
    assert metrics.eos_final_s(FED) == pytest.approx(0.2)  # 100.7 - last send 100.5
    # speech ending at 0.25 s is in chunk 3 (0.2-0.3], sent at 100.3: 100.7 - 100.3
    assert metrics.eos_final_s(FED, 0.25) == pytest.approx(0.4)
    assert metrics.eos_final_s(FED, 0.3) == pytest.approx(0.4)  # a chunk's own end is in it
    assert metrics.rtf(FED, speed=1.0) == pytest.approx(1.4)  # (100.7 - 100) / 0.5 s
    assert metrics.rtf(FED, speed=2.0) == pytest.approx(2.8)


def test_stability_counts_words_revised_between_consecutive_hypotheses():
    # "" -> "the": 0 of 0; "the" -> "the cat": 0 of 1; "the cat" -> "the hat sat": "cat"
    # revised, 1 of 2; "the hat sat" -> final "the hat sat" (punctuation and case aside): 0 of 3
    assert metrics.stability(FED) == (1, 6)


def test_cursor_lag_from_reference_word_ends():
    ref, ends = ["the", "hat", "sat"], [0.1, 0.3, 0.45]
    lags = metrics.cursor_lags(FED, ref, ends)
    # "" -> 0.1 - 0; "the" (1 right) -> 0.2 - 0.1; "the cat" (1) -> 0.3 - 0.1;
    # "the hat sat" (3) -> 0.4 - 0.45: the decoder named "sat" before its audio ended
    assert lags == pytest.approx([0.1, 0.1, 0.2, -0.05])


def test_per_utterance_row_and_pooled_figures():
    row = metrics.per_utterance(FED, 1.0, (["the", "hat", "sat"], [0.1, 0.3, 0.25]))
    assert row["eos_from"] == "reference word times"
    assert row["eos_final_s"] == pytest.approx(0.4) and row["n_partials"] == 4
    other = {**row, "first_partial_s": None, "eos_final_s": 0.2, "revised_words": 3,
             "interim_words": 4, "cursor_lag_s": None, "rtf": 1.0}  # fmt: skip
    failed = {**row, "failed": "stream broke", "eos_final_s": 99.0}
    p = metrics.pooled([row, other, failed], reps=200)
    assert p["eos_final_s"]["mean"] == pytest.approx(0.3) and p["eos_final_s"]["n"] == 2
    assert p["first_partial_s"]["mean"] == pytest.approx(0.25)
    assert p["first_partial_s"]["undefined"] == 1
    assert p["stability_revised"]["value"] == pytest.approx(4 / 10)  # (1 + 3) / (6 + 4)
    ci = p["eos_final_s"]["ci"]
    assert ci["low"] == pytest.approx(0.2) and ci["high"] == pytest.approx(
        0.4
    )  # all-a, all-b draws
    assert p["cursor_lag_s"]["n"] == 1


def test_pacing_and_overhead_summaries():
    pacing = metrics.pacing([FED])
    assert pacing["deadline_misses"] == 1  # only 0.02 s is over the 10 ms threshold
    assert pacing["lateness_s"]["max"] == pytest.approx(0.02)
    assert pacing["lateness_s"]["p50"] == pytest.approx(0.001)  # nearest rank of 5: the 3rd
    assert pacing["end_drift_s"]["max"] == pytest.approx(0.001)
    ovh = metrics.overhead([FED])  # only the two events the program stamped
    assert ovh["n"] == 2
    assert ovh["max"] == pytest.approx(0.01) and ovh["mean"] == pytest.approx(0.0055)


def test_pooled_mean_of_nothing_is_undefined_not_zero():
    assert metrics.pooled_mean([None, None]) == {"mean": None, "n": 0, "undefined": 2, "ci": None}
    assert metrics.pooled_ratio([0], [0])["value"] is None
