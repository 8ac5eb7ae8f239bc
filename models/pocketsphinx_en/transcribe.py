"""pocketsphinx_en: transcribe a wav list with PocketSphinx 5 (en-us acoustic model, bundled LM).

Contract v1 (models/README.md): `transcribe.py <wav_list> <result_dir>`. The shared loop
(`contract.run`) does the rest: resume, the result files, failures, `ASRBENCH_UTT_TIMEOUT`.
"""

from __future__ import annotations

import json
import os
import re
import sys
import wave
from pathlib import Path

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


FRAMES_PER_S = 100  # PocketSphinx's default frame rate (-frate 100)
_ALT = re.compile(r"\(\d+\)$")  # an alternative pronunciation: "read(2)"


class TimedOut:
    """Optional timed output, `hyp.timed.jsonl` beside hyp.tsv (models/README.md): one line
    per utterance with the decoder's word times. The shared loop hands `transcribe_one` only
    the wav path, so the IDs come from the wav list; a list that is not a regular file (the
    named pipe `ops/serve` streams) gets no timed output."""

    def __init__(self, argv: list[str]):
        self.ids: dict[str, list[str]] = {}
        self.path: Path | None = None
        if len(argv) == 2 and os.path.isfile(argv[0]):
            for line in Path(argv[0]).read_text(encoding="utf-8").splitlines():
                uid, _, wav = line.partition("\t")
                self.ids.setdefault(wav, []).append(uid)
            self.path = Path(argv[1]) / "hyp.timed.jsonl"

    def write(self, wav: str, segments: list[dict], words: list[dict]) -> None:
        if self.path is None:
            return
        with open(self.path, "a", encoding="utf-8") as fh:
            for uid in self.ids.get(wav, []):
                line = {"id": uid, "segments": segments, "words": words}
                fh.write(json.dumps(line, ensure_ascii=False) + "\n")


TIMED = TimedOut([])


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
