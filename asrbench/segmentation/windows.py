"""Fixed windows with overlap (`WindowParams`): the layout needs only the file's header.

Window k covers [k * hop, k * hop + window_s) with hop = window_s - overlap_s, laid until one
reaches the end of the file, which is clipped there: neighbours overlap by exactly `overlap_s`,
the windows start at 0 and end at the end of the file. Their hypotheses are joined with
`merge.merge_words` or `merge.merge_texts`; the audio of each is cut with `cut.cut_spans`.
"""

from __future__ import annotations

from pathlib import Path

from asrbench.segmentation.records import RecordingSpans, Segmentation, Span, WindowParams
from asrbench.segmentation.stream import info


def window_spans(duration: float, params: WindowParams) -> list[Span]:
    """The windows over [0, duration] (module rule)."""
    out: list[Span] = []
    k = 0
    while True:
        start = k * params.hop_s  # multiplied, not summed: no drift over an hour of windows
        end = start + params.window_s
        if end >= duration:
            out.append(Span(start, duration))
            return out
        out.append(Span(start, end))
        k += 1


def segment_windows(path: Path, params: WindowParams = WindowParams()) -> RecordingSpans:
    """The windows of an audio file (reads its header only)."""
    meta = info(path)
    spans = window_spans(meta.duration, params)
    return RecordingSpans(
        str(path), meta.duration, tuple(spans), Segmentation(params, rate=meta.rate)
    )
