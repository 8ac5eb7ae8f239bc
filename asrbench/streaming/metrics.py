"""Streaming metrics: pure functions of what the feed recorded (`FedUtterance`).

All times are the platform's monotonic clock in wall seconds (at `speed` x real time they are
that many times shorter than at 1x; the record keeps the speed). Per utterance:

- first_partial_s: first non-empty partial received minus the utterance's start `t0` (the
  instant its audio clock started); None when the program sent no non-empty partial.
- eos_final_s: final received minus the send time of the chunk that holds the end of speech
  (the end of the audio fed; or the reference's last word end, when word times exist), so the
  pacing's own lateness is not counted as the model's.
- stability: over consecutive hypotheses (each partial, then the next partial or the final),
  the words of the earlier one not kept as the later one's prefix ("revised"), divided by the
  earlier one's words: 0 = never revised.
- word emission latency (word times only): per reference word with an aligned end, the
  receipt of the first hypothesis (partial or final) that has the word right (the scorer's
  alignment, match.py) minus the send of the chunk holding the word's end; words never right
  are counted, not timed.
- cursor lag (word times only): per hypothesis, the audio cursor when it was received (the
  audio the platform had sent by then) minus the aligned end of the right reference word
  furthest into the reference; interims (partials) and the final apart, interims weighted by
  the cursor's advance until the next hypothesis.
- rtf: final received minus `t0`, times speed, over the audio's duration: 1.0 = the final came
  the instant the audio ended in real time.

Pooled figures are means over utterances (stability: the ratio of the sums) with bootstrap
intervals over utterances (`scoring.stats`), undefined values left out and counted.
"""

from __future__ import annotations

import bisect
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from asrbench.streaming.feed import MISS_S, FedUtterance
from asrbench.streaming.framing import Event
from scoring.stats import bootstrap_ci

_PUNCT = re.compile(r"[^\w\s']")


def words(text: str) -> list[str]:
    """Lower-case words without punctuation: what a partial and a final are compared in."""
    return _PUNCT.sub(" ", text.lower()).split()


def common_prefix(a: Sequence[str], b: Sequence[str]) -> int:
    """How many leading words `a` and `b` share."""
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def hypotheses(fed: FedUtterance) -> list[list[str]]:
    """The utterance's hypotheses in order: every partial, then the final."""
    return [words(e.text) for e in fed.events if e.type in ("partial", "final")]


def stability(fed: FedUtterance) -> tuple[int, int]:
    """(revised words, interim words) over consecutive pairs of hypotheses."""
    hyps = hypotheses(fed)
    revised = total = 0
    for earlier, later in zip(hyps, hyps[1:], strict=False):
        revised += len(earlier) - common_prefix(earlier, later)
        total += len(earlier)
    return revised, total


def first_partial_s(fed: FedUtterance) -> float | None:
    first = next((e for e in fed.events if e.type == "partial" and e.text.strip()), None)
    return None if first is None else first.mono_recv - fed.t0


def eos_send(fed: FedUtterance, eos_audio_s: float | None = None) -> float:
    """Send time of the chunk holding the end of speech (default: the last chunk)."""
    if eos_audio_s is None or not fed.chunk_s:
        return fed.sends[-1]
    k = max(0, math.ceil(eos_audio_s / fed.chunk_s - 1e-9) - 1)
    return fed.sends[min(k, len(fed.sends) - 1)]


def eos_final_s(fed: FedUtterance, eos_audio_s: float | None = None) -> float | None:
    final = fed.final
    if final is None or not fed.sends:
        return None
    return final.mono_recv - eos_send(fed, eos_audio_s)


@dataclass(frozen=True)
class RefTiming:
    """What the word metrics of one utterance read: each reference token's aligned end
    (None: the aligner could not place it) and, per hypothesis event (every partial, then the
    final, as `hypotheses`), the reference indices it got right (match.py)."""

    ends: list[float | None]
    correct: list[frozenset[int]]

    @property
    def unplaced(self) -> int:
        return sum(e is None for e in self.ends)

    @property
    def eos(self) -> float | None:
        """The end of speech: the last reference word's aligned end (None when that word is
        unplaced: the end of the audio is used then, not an earlier word's end)."""
        return self.ends[-1] if self.ends else None


def hyp_events(fed: FedUtterance) -> list[Event]:
    return [e for e in fed.events if e.type in ("partial", "final")]


def word_latencies(fed: FedUtterance, timing: RefTiming) -> tuple[list[float], int]:
    """(latency of each placed reference word that was emitted, placed words never emitted).

    A word's latency: the receipt of the first hypothesis (partial or final) that has it right,
    minus the send of the chunk that holds its aligned end. Negative when the program named
    the word before the chunk holding its end was sent."""
    events = hyp_events(fed)
    first: dict[int, float] = {}
    for event, correct in zip(events, timing.correct, strict=False):
        for i in correct:
            first.setdefault(i, event.mono_recv)
    out, never = [], 0
    for i, end in enumerate(timing.ends):
        if end is None:
            continue
        if i in first:
            out.append(first[i] - eos_send(fed, end))
        else:
            never += 1
    return out, never


def cursor_lag(
    audio_s: float, correct: frozenset[int], ends: Sequence[float | None]
) -> float | None:
    """Audio consumed minus the end of the last reference word the hypothesis got right
    (the right word furthest into the reference with a placed end); None when it has none."""
    placed = [e for i in correct if i < len(ends) and (e := ends[i]) is not None]
    return audio_s - max(placed) if placed else None


def audio_sent(fed: FedUtterance, at: float) -> float:
    """The audio cursor: seconds of audio the platform had sent by monotonic time `at`."""
    return min(bisect.bisect_right(fed.sends, at) * fed.chunk_s, fed.audio_s)


def interim_lags(fed: FedUtterance, timing: RefTiming) -> tuple[list[float], list[float], int]:
    """Per partial: (lags, weights, partials without a right placed word). A partial's lag
    is the audio cursor when it was received (`audio_sent`, so a program that falls behind
    lags) minus the end of its last right word; its weight, the audio it stood for: the
    cursor's advance until the next hypothesis was received."""
    events = hyp_events(fed)
    cursors = [audio_sent(fed, e.mono_recv) for e in events]
    lags, weights, skipped = [], [], 0
    for j, (event, correct) in enumerate(zip(events, timing.correct, strict=False)):
        if event.type != "partial":
            continue
        lag = cursor_lag(cursors[j], correct, timing.ends)
        if lag is None:
            skipped += 1
            continue
        nxt = cursors[j + 1] if j + 1 < len(events) else cursors[j]
        lags.append(lag)
        weights.append(max(0.0, nxt - cursors[j]))
    return lags, weights, skipped


def final_lag(fed: FedUtterance, timing: RefTiming) -> float | None:
    """The final's cursor lag: all the audio (the final comes after the last send) minus the
    end of its last right word."""
    events = hyp_events(fed)
    if not events or events[-1].type != "final" or len(timing.correct) < len(events):
        return None
    cursor = audio_sent(fed, events[-1].mono_recv)
    return cursor_lag(cursor, timing.correct[len(events) - 1], timing.ends)


def _rank(a: np.ndarray, p: float) -> float:
    """The nearest-rank p-quantile of a sorted array."""
    return float(a[min(len(a) - 1, max(0, math.ceil(p * len(a)) - 1))])


def lag_stats(values: Sequence[float], weights: Sequence[float] | None = None) -> dict[str, Any]:
    """min, max, their midpoint, mean, duration-weighted mean, p50, p90, p99 (nearest rank)."""
    if not values:
        keys = ("min", "max", "midpoint", "mean", "weighted_mean", "p50", "p90", "p99")
        return {"n": 0, **dict.fromkeys(keys)}
    a = np.sort(np.asarray(values, dtype=float))
    w = np.asarray(weights if weights is not None else np.ones(len(values)), dtype=float)
    x = np.asarray(values, dtype=float)
    return {
        "n": len(a),
        "min": float(a[0]),
        "max": float(a[-1]),
        "midpoint": float((a[0] + a[-1]) / 2),
        "mean": float(a.mean()),
        "weighted_mean": float((w * x).sum() / w.sum()) if w.sum() > 0 else float(a.mean()),
        "p50": _rank(a, 0.5),
        "p90": _rank(a, 0.9),
        "p99": _rank(a, 0.99),
    }


def word_rows(fed: FedUtterance, timing: RefTiming | None) -> dict[str, Any]:
    """The per-utterance fields of the word metrics (None when there are no word times)."""
    if timing is None or fed.failed:
        keys = ("word_latency_s", "words_never_emitted", "words_unplaced", "words_ref",
                "cursor_lag_s", "cursor_lag_weight_s", "cursor_lag_skipped",
                "cursor_lag_final_s")  # fmt: skip
        return dict.fromkeys(keys)
    lat, never = word_latencies(fed, timing)
    lags, weights, skipped = interim_lags(fed, timing)
    return {
        "word_latency_s": lat,
        "words_never_emitted": never,
        "words_unplaced": timing.unplaced,
        "words_ref": len(timing.ends),
        "cursor_lag_s": lags,
        "cursor_lag_weight_s": weights,
        "cursor_lag_skipped": skipped,
        "cursor_lag_final_s": final_lag(fed, timing),
    }


def rtf(fed: FedUtterance, speed: float) -> float | None:
    final = fed.final
    if final is None or fed.audio_s <= 0:
        return None
    return (final.mono_recv - fed.t0) * speed / fed.audio_s


def per_utterance(
    fed: FedUtterance, speed: float, timing: RefTiming | None = None
) -> dict[str, Any]:
    """Every per-utterance figure of one fed utterance (timing: its reference word times and
    what each hypothesis got right; None where the dataset has none)."""
    revised, interim = stability(fed)
    eos = timing.eos if timing else None
    return {
        "id": fed.uid,
        "audio_s": fed.audio_s,
        "n_partials": sum(e.type == "partial" for e in fed.events),
        "first_partial_s": first_partial_s(fed),
        "eos_final_s": eos_final_s(fed, eos),
        "eos_from": "reference word times" if eos is not None else "end of audio",
        "revised_words": revised,
        "interim_words": interim,
        **word_rows(fed, timing),
        "rtf": rtf(fed, speed),
        "failed": fed.failed,
    }


def _num(x: float | None) -> float | None:
    return None if x is None or not math.isfinite(x) else x


def pooled_mean(values: Sequence[float | None], reps: int = 1000, seed: int = 0) -> dict[str, Any]:
    """Mean over utterances with its bootstrap interval; None values left out and counted."""
    vals = [v for v in values if v is not None]
    out: dict[str, Any] = {"mean": None, "n": len(vals), "undefined": len(values) - len(vals)}
    if not vals:
        out["ci"] = None
        return out
    out["mean"] = float(np.mean(vals))
    ci = bootstrap_ci(np.asarray(vals), np.ones(len(vals)), reps=reps, seed=seed)
    out["ci"] = {"low": _num(ci["low"]), "high": _num(ci["high"]), "level": ci["level"]}
    return out


def pooled_ratio(
    num: Sequence[float], den: Sequence[float], reps: int = 1000, seed: int = 0
) -> dict[str, Any]:
    """sum(num)/sum(den) with its bootstrap interval over utterances (None: empty denominator)."""
    total = sum(den)
    out: dict[str, Any] = {
        "value": sum(num) / total if total else None,
        "num": sum(num),
        "den": total,
    }
    ci = bootstrap_ci(
        np.asarray(num, dtype=float), np.asarray(den, dtype=float), reps=reps, seed=seed
    )
    out["ci"] = (
        {"low": _num(ci["low"]), "high": _num(ci["high"]), "level": ci["level"]} if total else None
    )
    return out


def pooled(rows: Sequence[dict[str, Any]], reps: int = 1000, seed: int = 0) -> dict[str, Any]:
    """The pooled figures of per-utterance rows (`per_utterance`), failed ones left out."""
    ok = [r for r in rows if not r["failed"]]
    return {
        "first_partial_s": pooled_mean([r["first_partial_s"] for r in ok], reps, seed),
        "eos_final_s": pooled_mean([r["eos_final_s"] for r in ok], reps, seed),
        "rtf": pooled_mean([r["rtf"] for r in ok], reps, seed),
        "stability_revised": pooled_ratio(
            [r["revised_words"] for r in ok], [r["interim_words"] for r in ok], reps, seed
        ),
        **pooled_words([r for r in ok if r.get("word_latency_s") is not None], reps, seed),
    }


def pooled_words(rows: Sequence[dict[str, Any]], reps: int, seed: int) -> dict[str, Any]:
    """Word emission latency and cursor lags pooled over the rows that have word times
    (None when none has): every word or interim pooled for the spread, and a bootstrap
    interval over utterances for the mean (per word; per interim, duration-weighted)."""
    keys = ("word_latency_s", "cursor_lag_interim_s", "cursor_lag_final_s")
    if not rows:
        return dict.fromkeys(keys)
    lat = [r["word_latency_s"] for r in rows]
    words = {
        **lag_stats([x for v in lat for x in v]),
        "mean_ci": pooled_ratio([sum(v) for v in lat], [len(v) for v in lat], reps, seed)["ci"],
        "never_emitted": sum(r["words_never_emitted"] for r in rows),
        "unplaced": sum(r["words_unplaced"] for r in rows),
        "reference_words": sum(r["words_ref"] for r in rows),
    }
    lags = [(r["cursor_lag_s"], r["cursor_lag_weight_s"]) for r in rows]
    interim = {
        **lag_stats([x for v, _ in lags for x in v], [x for _, w in lags for x in w]),
        "weighted_mean_ci": pooled_ratio(
            [sum(a * b for a, b in zip(v, w, strict=True)) for v, w in lags],
            [sum(w) for _, w in lags],
            reps,
            seed,
        )["ci"],
        "skipped": sum(r["cursor_lag_skipped"] for r in rows),
    }
    finals = [r["cursor_lag_final_s"] for r in rows]
    final = {
        **lag_stats([x for x in finals if x is not None]),
        "mean_ci": pooled_mean(finals, reps, seed)["ci"],
        "undefined": sum(x is None for x in finals),
    }
    return dict(zip(keys, (words, interim, final), strict=True))


def spread(values: Sequence[float]) -> dict[str, Any]:
    """n, mean, p50, p99 and max of a list of durations in seconds (None when empty)."""
    if not values:
        return {"n": 0, "mean": None, "p50": None, "p99": None, "max": None}
    a = np.sort(np.asarray(values, dtype=float))
    return {
        "n": len(a),
        "mean": float(a.mean()),
        "p50": _rank(a, 0.5),
        "p99": _rank(a, 0.99),
        "max": float(a[-1]),
    }


def pacing(feds: Sequence[FedUtterance]) -> dict[str, Any]:
    """How far the feed was from its clock: each send's lateness, misses, end-of-utterance drift."""
    late = [x for f in feds for x in f.lateness]
    return {
        "lateness_s": spread(late),
        "deadline_misses": sum(x > MISS_S for x in late),
        "miss_threshold_s": MISS_S,
        "end_drift_s": spread([f.lateness[-1] for f in feds if f.lateness]),
    }


def overhead(feds: Sequence[FedUtterance]) -> dict[str, Any]:
    """Program write to platform record, per event (events the program stamped)."""
    return spread(
        [e.t_recv - e.t_program for f in feds for e in f.events if e.t_program is not None]
    )
