"""Audio in for the zoo's programs: any PCM WAV (any rate, channels, 8/16/24/32-bit) as float32
mono samples at the rate the model takes.

Datasets are 16 kHz by default but not always (the fairness work uses 8 kHz FSDD audio), and
the contract says a program that needs another rate resamples itself: this is that step, once.
Resampling uses soxr (the same library and quality the datasets are built with).
"""

from __future__ import annotations

import wave

import numpy as np

__all__ = ["read_wav"]


def _pcm_to_float(raw: bytes, width: int) -> np.ndarray:
    if width == 1:  # 8-bit WAV is unsigned
        return (np.frombuffer(raw, dtype=np.uint8).astype(np.float32) - 128.0) / 128.0
    if width == 2:
        return np.frombuffer(raw, dtype="<i2").astype(np.float32) / 32768.0
    if width == 3:
        b = np.frombuffer(raw, dtype=np.uint8).reshape(-1, 3).astype(np.int32)
        v = b[:, 0] | (b[:, 1] << 8) | (b[:, 2] << 16)
        v = np.where(v >= 1 << 23, v - (1 << 24), v)
        return v.astype(np.float32) / float(1 << 23)
    if width == 4:
        return np.frombuffer(raw, dtype="<i4").astype(np.float32) / float(1 << 31)
    raise ValueError(f"unsupported sample width {8 * width} bits")


def read_wav(path: str, rate: int = 16000) -> tuple[np.ndarray, float]:
    """(float32 mono samples at `rate`, duration in seconds) of a PCM WAV file."""
    with wave.open(str(path), "rb") as w:
        src_rate, channels, width = w.getframerate(), w.getnchannels(), w.getsampwidth()
        raw = w.readframes(w.getnframes())
    audio = _pcm_to_float(raw, width)
    if channels > 1:
        audio = audio.reshape(-1, channels).mean(axis=1)
    seconds = len(audio) / float(src_rate)
    if src_rate != rate:
        import soxr

        audio = soxr.resample(audio, src_rate, rate, quality="VHQ").astype(np.float32)
    return np.ascontiguousarray(audio, dtype=np.float32), seconds
