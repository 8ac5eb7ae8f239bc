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
- cursor_lags_s (word times only): per partial, audio consumed minus the end of the last
  reference word the partial got right, reading the partial's longest common word prefix with
  the reference as "got right" (no alignment of the interim; a first slice).
- rtf: final received minus `t0`, times speed, over the audio's duration: 1.0 = the final came
  the instant the audio ended in real time.

Pooled figures are means over utterances (stability: the ratio of the sums) with bootstrap
intervals over utterances (`scoring.stats`), undefined values left out and counted.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Any

import numpy as np

from asrbench.streaming.feed import MISS_S, FedUtterance
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


def cursor_lags(fed: FedUtterance, ref: Sequence[str], word_ends: Sequence[float]) -> list[float]:
    """Per partial: audio consumed minus the end of the last reference word it got right."""
    out = []
    for e in fed.events:
        if e.type != "partial":
            continue
        k = common_prefix(words(e.text), ref)
        out.append(e.audio_s - (word_ends[k - 1] if k else 0.0))
    return out


def rtf(fed: FedUtterance, speed: float) -> float | None:
    final = fed.final
    if final is None or fed.audio_s <= 0:
        return None
    return (final.mono_recv - fed.t0) * speed / fed.audio_s


def per_utterance(
    fed: FedUtterance,
    speed: float,
    word_times: tuple[list[str], list[float]] | None = None,
) -> dict[str, Any]:
    """Every per-utterance figure of one fed utterance (word_times: reference words, ends)."""
    revised, interim = stability(fed)
    eos = word_times[1][-1] if word_times and word_times[1] else None
    lags = cursor_lags(fed, *word_times) if word_times else None
    return {
        "id": fed.uid,
        "audio_s": fed.audio_s,
        "n_partials": sum(e.type == "partial" for e in fed.events),
        "first_partial_s": first_partial_s(fed),
        "eos_final_s": eos_final_s(fed, eos),
        "eos_from": "reference word times" if eos is not None else "end of audio",
        "revised_words": revised,
        "interim_words": interim,
        "cursor_lag_s": lags,
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
    num: Sequence[int], den: Sequence[int], reps: int = 1000, seed: int = 0
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
    lags = [r["cursor_lag_s"] for r in ok if r["cursor_lag_s"] is not None]
    return {
        "first_partial_s": pooled_mean([r["first_partial_s"] for r in ok], reps, seed),
        "eos_final_s": pooled_mean([r["eos_final_s"] for r in ok], reps, seed),
        "rtf": pooled_mean([r["rtf"] for r in ok], reps, seed),
        "stability_revised": pooled_ratio(
            [r["revised_words"] for r in ok], [r["interim_words"] for r in ok], reps, seed
        ),
        # the mean lag of each utterance's partials, pooled over utterances
        "cursor_lag_s": pooled_mean([sum(x) / len(x) if x else None for x in lags], reps, seed)
        if lags
        else None,
    }


def spread(values: Sequence[float]) -> dict[str, Any]:
    """n, mean, p50, p99 and max of a list of durations in seconds (None when empty)."""
    if not values:
        return {"n": 0, "mean": None, "p50": None, "p99": None, "max": None}
    a = np.sort(np.asarray(values, dtype=float))

    def q(p: float) -> float:  # nearest rank
        return float(a[min(len(a) - 1, math.ceil(p * len(a)) - 1)])

    return {
        "n": len(a),
        "mean": float(a.mean()),
        "p50": q(0.5),
        "p99": q(0.99),
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
