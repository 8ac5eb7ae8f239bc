"""pocketsphinx_en: transcribe a wav list with PocketSphinx 5 (en-us acoustic model, bundled LM).

Contract v1 (models/README.md): `transcribe.py <wav_list> <result_dir>`. The shared loop
(`contract.run`) does the rest: resume, the result files, failures, `ASRBENCH_UTT_TIMEOUT`.
"""

from __future__ import annotations

import sys
import wave

from contract import run
from pocketsphinx import Config, Decoder

SAMPLE_RATE = 16000


def read_pcm(path: str) -> tuple[bytes, float]:
    """16 kHz mono 16-bit PCM: the file's own samples when it is already that, else resampled
    (other rates, channels or widths; `audio.py`, soxr)."""
    with wave.open(path, "rb") as w:
        if w.getframerate() == SAMPLE_RATE and w.getnchannels() == 1 and w.getsampwidth() == 2:
            return w.readframes(w.getnframes()), w.getnframes() / SAMPLE_RATE
    import numpy as np
    from audio import read_wav

    samples, seconds = read_wav(path, SAMPLE_RATE)
    pcm = np.clip(np.round(samples * 32768.0), -32768, 32767).astype("<i2")
    return pcm.tobytes(), seconds


def load() -> Decoder:
    """The default en-us acoustic model, language model and dictionary."""
    return Decoder(Config(loglevel="FATAL"))


def transcribe_one(decoder: Decoder, path: str) -> tuple[str, float]:
    pcm, seconds = read_pcm(path)
    # Without this the decoder carries feature (CMN) statistics from one utterance into the
    # next, so a result would depend on the order and sharding of the list.
    decoder.reinit_feat()
    decoder.start_utt()
    decoder.process_raw(pcm, full_utt=True)
    decoder.end_utt()
    result = decoder.hyp()
    return (result.hypstr if result is not None else ""), seconds


if __name__ == "__main__":
    sys.exit(run("pocketsphinx_en", sys.argv[1:], load, transcribe_one))
