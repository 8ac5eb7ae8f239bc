"""pocketsphinx_en: transcribe a wav list with PocketSphinx 5 (en-us acoustic model, bundled LM).

Contract v1 (models/README.md): `transcribe.py <wav_list> <result_dir>`. The shared loop
(`contract.run`) does the rest: resume, the result files, failures, `ASRBENCH_UTT_TIMEOUT`.
"""

from __future__ import annotations

import re
import sys
import wave

from contract import TimedOut, run
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


FRAMES_PER_S = 100  # PocketSphinx's default frame rate (-frate 100)
_ALT = re.compile(r"\(\d+\)$")  # an alternative pronunciation: "read(2)"
TIMED = TimedOut([])  # the decoder's word times (`contract.TimedOut`)


def word_times(decoder: Decoder, text: str) -> tuple[list[dict], list[dict]]:
    """The hypothesis' words with their times (fillers and silences left out), and one
    segment spanning them; nothing when the words do not spell the hypothesis."""
    words = []
    for seg in decoder.seg():
        word = _ALT.sub("", seg.word)
        if word.startswith(("<", "[")) or not word:
            continue
        start, end = seg.start_frame / FRAMES_PER_S, (seg.end_frame + 1) / FRAMES_PER_S
        words.append({"start": round(start, 2), "end": round(end, 2), "word": word})
    if not words or " ".join(w["word"] for w in words) != text:
        return [], []
    return [{"start": words[0]["start"], "end": words[-1]["end"], "text": text}], words


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
    text = result.hypstr if result is not None else ""
    if text:
        segments, words = word_times(decoder, text)
        if segments:
            TIMED.write(path, segments, words)
    return text, seconds


if __name__ == "__main__":
    TIMED = TimedOut(sys.argv[1:])
    sys.exit(run("pocketsphinx_en", sys.argv[1:], load, transcribe_one))
