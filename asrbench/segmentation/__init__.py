"""Segmentation of long recordings into pieces a model can take (issue 29, item 2).

Two ways, each a frozen parameter record whose `Segmentation` goes into provenance:

- voice activity detection (`segment_vad`, `VadParams`): silero VAD's ONNX model (the weights
  the silero-vad wheel ships, run by ONNX Runtime; torch is never loaded) or webrtcvad; spans
  of speech, padded, cut at the quietest frame when longer than `max_segment_s`;
- fixed windows with overlap (`segment_windows`, `WindowParams`), whose hypotheses are joined
  by `merge_words` (word times: each word kept by the window whose share holds its midpoint)
  or `merge_texts` (text only: the overlap aligned and cut in its middle).

Both read the file in blocks (`stream.blocks`: soundfile + soxr), never whole, and return
`RecordingSpans`: `Span`s in seconds of the original file. `cut_spans` writes each span's audio to
its own WAV at the model's rate, in one more streamed pass. docs/LONGFORM.md has the rules.
"""

from asrbench.segmentation.cut import CutFile, cut_spans
from asrbench.segmentation.merge import Word, merge_texts, merge_words
from asrbench.segmentation.records import (
    RecordingSpans,
    Segmentation,
    SegmentationError,
    Span,
    VadParams,
    WindowParams,
    check_options,
    parse_options,
)
from asrbench.segmentation.vad import segment_vad
from asrbench.segmentation.windows import segment_windows, window_spans

__all__ = [
    "CutFile",
    "RecordingSpans",
    "Segmentation",
    "SegmentationError",
    "Span",
    "VadParams",
    "WindowParams",
    "Word",
    "check_options",
    "cut_spans",
    "merge_texts",
    "merge_words",
    "parse_options",
    "segment_vad",
    "segment_windows",
    "window_spans",
]
