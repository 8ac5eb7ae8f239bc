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


# Reference "the hat sat" with word ends 0.1, 0.3, 0.45; what each hypothesis got right
# (match.py's output, written by hand): "" -> nothing; "the" -> the; "the cat" -> the;
# "the hat sat" -> all three; final -> all three.
TIMING = metrics.RefTiming(
    [0.1, 0.3, 0.45],
    [frozenset(), frozenset({0}), frozenset({0}), frozenset({0, 1, 2}), frozenset({0, 1, 2})],
)


def test_word_emission_latency_is_first_right_receipt_minus_send_of_the_end_chunk():
    lat, never = metrics.word_latencies(FED, TIMING)
    # "the" ends at 0.1 s: chunk 1, sent 100.1; first right in "The" received 100.25 -> 0.15;
    # "hat" ends at 0.3: chunk 3, sent 100.3; first right in "the hat sat" at 100.45 -> 0.15;
    # "sat" ends at 0.45: chunk 5, sent 100.5; right at 100.45 -> -0.05 (named before sent)
    assert lat == pytest.approx([0.15, 0.15, -0.05]) and never == 0
    unplaced = metrics.RefTiming([0.1, None, 0.45], TIMING.correct[:2] + [frozenset()] * 3)
    lat, never = metrics.word_latencies(FED, unplaced)
    assert lat == pytest.approx([0.15]) and never == 1  # "hat" unplaced: neither timed nor never
    assert unplaced.unplaced == 1


def test_cursor_lag_of_interims_and_final_from_the_alignment():
    lags, weights, skipped = metrics.interim_lags(FED, TIMING)
    # "" has no right word: skipped; "The" 0.2 - 0.1; "the cat" 0.3 - 0.1; "the hat sat"
    # 0.4 - 0.45; each weighted by the cursor's advance to the next hypothesis (0.1 each)
    assert skipped == 1
    assert lags == pytest.approx([0.1, 0.2, -0.05])
    assert weights == pytest.approx([0.1, 0.1, 0.1])
    assert metrics.final_lag(FED, TIMING) == pytest.approx(0.05)  # 0.5 - 0.45
    # the cursor is the audio *sent* when a hypothesis was received, not the program's own
    # clock: a partial about 0.2 s of audio received only after the 4th send lags by 0.3
    late = FedUtterance(
        "u", 0.5, 0.1, 100.0, SENDS, [0.0] * 5, [_ev("partial", "the", 0.2, 100.41)]
    )
    one = metrics.RefTiming([0.1, 0.3, 0.45], [frozenset({0})])
    lags, weights, skipped = metrics.interim_lags(late, one)
    assert lags == pytest.approx([0.3]) and weights == [0.0] and skipped == 0
    assert metrics.audio_sent(late, 99.0) == 0.0 and metrics.audio_sent(late, 200.0) == 0.5
    assert metrics.cursor_lag(1.0, frozenset({0, 2}), [0.1, 0.9, None]) == pytest.approx(0.9)
    assert metrics.cursor_lag(1.0, frozenset(), [0.1]) is None


def test_lag_stats_weight_by_duration():
    s = metrics.lag_stats([1.0, 3.0, 2.0], [1.0, 0.0, 3.0])
    assert (s["min"], s["max"], s["midpoint"]) == (1.0, 3.0, 2.0)
    assert s["mean"] == pytest.approx(2.0)
    assert s["weighted_mean"] == pytest.approx((1 + 6) / 4)  # the 3.0 stood for no audio
    assert s["p90"] == 3.0 and s["p50"] == 2.0  # nearest rank
    assert metrics.lag_stats([])["p99"] is None


def test_per_utterance_row_and_pooled_figures():
    ends = metrics.RefTiming([0.1, 0.3, 0.25], TIMING.correct)
    row = metrics.per_utterance(FED, 1.0, ends)
    assert row["eos_from"] == "reference word times"
    assert row["eos_final_s"] == pytest.approx(0.4) and row["n_partials"] == 4
    assert row["words_ref"] == 3 and len(row["word_latency_s"]) == 3
    other = {**row, "first_partial_s": None, "eos_final_s": 0.2, "revised_words": 3,
             "interim_words": 4, "rtf": 1.0, **metrics.word_rows(FED, None)}  # fmt: skip
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
    # only `row` has word times (the failed one is left out)
    assert p["word_latency_s"]["n"] == 3 and p["word_latency_s"]["reference_words"] == 3
    assert p["cursor_lag_interim_s"]["n"] == 3 and p["cursor_lag_interim_s"]["skipped"] == 1
    assert p["cursor_lag_final_s"]["n"] == 1
    assert metrics.pooled([other], reps=10)["word_latency_s"] is None


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
