"""Whisper (faster-whisper), streaming: the LocalAgreement-2 re-decoding policy
(`stream_policy.py`) over the same model and pinned decoding as the batch program.

The streaming program of the faster-whisper cards (`streaming: whisper_stream.py`, declared
under `image.shared` with `stream_policy.py` and `whisper_transcribe.py`). The model loads
exactly as in `whisper_transcribe.py` (the card's weights, runtime and `decoding`), with two
changes the policy needs: segment timestamps on (`without_timestamps: false`: the segment ends
are where the buffer may be trimmed), and the committed text cut from the buffer passed as
`initial_prompt`. Segments Whisper itself marks as silence (`no_speech_prob` above 0.9) give no
words, as in whisper_streaming.
"""

from __future__ import annotations

import sys

import numpy as np
from stream_policy import Hypothesis, Transcribe, serve
from whisper_transcribe import Whisper, load_card

NO_SPEECH = 0.9  # whisper_online.py's threshold for dropping a segment's words


def load() -> Transcribe:
    import ctranslate2

    whisper = Whisper()
    opts = dict(whisper.opts, without_timestamps=False)

    def transcribe(audio: np.ndarray, prompt: str) -> Hypothesis:
        ctranslate2.set_random_seed(whisper.seed)  # the temperature fallback samples
        segments, _ = whisper.model.transcribe(audio, initial_prompt=prompt or None, **opts)
        return Hypothesis.from_segments(
            (s.text, s.end) for s in segments if s.no_speech_prob <= NO_SPEECH
        )

    return transcribe


if __name__ == "__main__":
    sys.exit(serve(load_card()["id"], load))
