"""Speech spans from voice activity detection: frames -> regions -> padded, bounded spans.

`segment_vad(path, params)` streams the file once through the chosen detector
(`frames.silero_scores` or `frames.webrtc_scores`) and turns the per-frame scores into spans
with `spans(scores, params, duration)`, a pure function of the scores:

1. regions: a frame scoring >= `threshold` opens speech; speech ends once the score has stayed
   below `threshold - 0.15` for `min_silence_s` (a score back >= `threshold` before that
   cancels the pause), as silero's own `get_speech_timestamps` does;
2. regions shorter than `min_speech_s` are dropped;
3. each region is widened by `pad_s` on both sides, clipped to [0, duration]; regions that
   now touch or overlap are joined;
4. a span longer than `max_segment_s` is cut at its quietest frame (lowest score, then lowest
   energy) between half the limit and the limit after its start, again on the rest, until every
   piece fits; pieces meet exactly at the cut (no padding is added there).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from asrbench.segmentation import frames
from asrbench.segmentation.records import RecordingSpans, Segmentation, Span, VadParams
from asrbench.segmentation.stream import BLOCK_S, blocks, info

HYSTERESIS = 0.15  # silero's gap between the speech threshold and the end-of-speech threshold


def segment_vad(
    path: Path, params: VadParams = VadParams(), block_s: float = BLOCK_S
) -> RecordingSpans:
    """The speech spans of an audio file, read in `block_s` blocks (never whole)."""
    meta = info(path)
    stream = blocks(path, frames.RATE, block_s)
    if params.method == "silero":
        scores = frames.silero_scores(stream)
        model = frames.silero_model_id()
    else:
        scores = frames.webrtc_scores(stream, params.aggressiveness)
        model = frames.webrtc_model_id()
    found = spans(scores, params, meta.duration)
    record = Segmentation(params=params, model=model, rate=frames.RATE)
    return RecordingSpans(str(path), meta.duration, tuple(found), record)


def spans(scores: frames.FrameScores, params: VadParams, duration: float) -> list[Span]:
    """Steps 1-4 of the module's rule, over one recording's frame scores."""
    min_silence = max(1, round(params.min_silence_s / scores.frame_s))
    found = regions(scores.probs, params.threshold, min_silence)
    min_len = params.min_speech_s / scores.frame_s
    kept = [(a * scores.frame_s, b * scores.frame_s) for a, b in found if b - a >= min_len]
    padded = _pad_and_join(kept, params.pad_s, duration)
    if params.max_segment_s is None:
        return [Span(a, b) for a, b in padded]
    out: list[Span] = []
    for a, b in padded:
        out.extend(split_long(a, b, params.max_segment_s, scores))
    return out


def regions(probs: np.ndarray, threshold: float, min_silence: int) -> list[tuple[int, int]]:
    """Speech regions as [first frame, end frame) pairs (step 1)."""
    low = max(threshold - HYSTERESIS, 0.01)
    out: list[tuple[int, int]] = []
    start: int | None = None
    quiet_since: int | None = None
    for i, p in enumerate(probs.tolist()):
        if start is None:
            if p >= threshold:
                start, quiet_since = i, None
            continue
        if p >= threshold:
            quiet_since = None
        elif p < low and quiet_since is None:
            quiet_since = i
        if quiet_since is not None and i + 1 - quiet_since >= min_silence:
            out.append((start, quiet_since))
            start = quiet_since = None
    if start is not None:
        out.append((start, quiet_since if quiet_since is not None else len(probs)))
    return out


def _pad_and_join(
    found: list[tuple[float, float]], pad: float, duration: float
) -> list[tuple[float, float]]:
    out: list[tuple[float, float]] = []
    for a, b in found:
        a, b = max(0.0, a - pad), min(duration, b + pad)
        if b <= a:
            continue
        if out and a <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], b))
        else:
            out.append((a, b))
    return out


def split_long(start: float, end: float, limit: float, scores: frames.FrameScores) -> list[Span]:
    """Cut [start, end) into pieces of at most `limit` seconds at the quietest frames (step 4)."""
    pieces: list[Span] = []
    while end - start > limit:
        cut = quietest(scores, start + limit / 2, start + limit)
        pieces.append(Span(start, cut))
        start = cut
    pieces.append(Span(start, end))
    return pieces


def quietest(scores: frames.FrameScores, lo: float, hi: float) -> float:
    """The middle of the frame wholly inside [lo, hi] with the lowest score, then energy;
    `hi` itself when no frame fits (a span past the scored audio)."""
    first = int(np.ceil(lo / scores.frame_s))
    last = int(np.floor(hi / scores.frame_s)) - 1  # the last frame that ends by hi
    last = min(last, len(scores.probs) - 1)
    if last < first:
        return hi
    window = slice(first, last + 1)
    best = np.lexsort((scores.energy[window], scores.probs[window]))[0]
    return (first + int(best) + 0.5) * scores.frame_s
