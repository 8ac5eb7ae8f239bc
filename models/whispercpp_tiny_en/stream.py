"""whispercpp_tiny_en, streaming: the LocalAgreement-2 re-decoding policy (`stream_policy.py`,
shared) over whisper.cpp, with the same model and pinned decoding as `transcribe.py`.

whisper.cpp has no incremental decoder in its library API (its `stream` example re-decodes a
sliding window too), so the buffer is re-decoded as for faster-whisper, with two changes to the
card's `decoding`: segment timestamps on (`no_timestamps: false`: the segment ends are where the
buffer may be trimmed) and the committed text cut from the buffer as `initial_prompt`. Both are
passed on every call: pywhispercpp keeps parameters from one call to the next.
"""

from __future__ import annotations

import sys

import numpy as np
from stream_policy import Hypothesis, Transcribe, serve
from transcribe import WhisperCpp, load_card

CENTISECONDS = 100.0  # whisper.cpp's segment times are in 10-ms units


def load() -> Transcribe:
    w = WhisperCpp()
    opts = dict(w.opts, no_timestamps=False)

    def transcribe(audio: np.ndarray, prompt: str) -> Hypothesis:
        segments = w.model.transcribe(audio, initial_prompt=prompt, **opts)
        return Hypothesis.from_segments((s.text, s.t1 / CENTISECONDS) for s in segments)

    return transcribe


if __name__ == "__main__":
    sys.exit(serve(load_card()["id"], load))
