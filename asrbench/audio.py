"""The one home of audio decode, resample and write (tests/test_architecture.py checks that no
other module imports soundfile or soxr).

Every reader gets float samples shaped (frames, channels) and its rate; mono is the mean of
the channels (as every dataset's importer mixes down); the project's one resampler is soxr at
VHQ quality, deterministic, so the same input gives the same bytes; every WAV written is 16-bit
PCM, clipped to [-1, 1], which soundfile stores as rint(y * 32768) with no timestamp (the same
samples give the same bytes). Files are written whole through `asrbench.fsio` (a reader never
sees half a file).
"""

from __future__ import annotations

import io
import wave
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import soundfile as sf
import soxr

from asrbench.fsio import atomic_write_bytes

QUALITY = "VHQ"  # soxr's; named in cache identities (fairness/inputs.RESAMPLER)
SUBTYPE = "PCM_16"
# What reading a WAV as stored (`wav_pcm`) raises for a missing, short or non-PCM file.
WAV_ERRORS = (OSError, wave.Error, EOFError)
# What libsndfile raises for a failed read or write (callers catch it, never import soundfile).
SoundFileError = sf.SoundFileError


def read(path: Path | str, dtype: str = "float64") -> tuple[np.ndarray, int]:
    """(samples (frames, channels), rate) of an audio file libsndfile reads."""
    return sf.read(str(path), dtype=dtype, always_2d=True)


def decode(data: bytes, dtype: str = "float32") -> tuple[np.ndarray, int]:
    """`read` of audio held in memory."""
    return sf.read(io.BytesIO(data), dtype=dtype, always_2d=True)


def info(path: Path | str) -> Any:
    """libsndfile's header of a file (`frames`, `samplerate`, `channels`, `duration`)."""
    return sf.info(str(path))


def mono(samples: np.ndarray) -> np.ndarray:
    """Channels averaged (a 1-D array is already mono)."""
    return samples.mean(axis=1) if samples.ndim == 2 else samples


def resample(x: np.ndarray, rate_in: int, rate_out: int) -> np.ndarray:
    """`x` at `rate_out` (soxr VHQ); `x` itself when the rates agree."""
    if rate_in == rate_out:
        return x
    return soxr.resample(x, rate_in, rate_out, quality=QUALITY)


def resample_stream(rate_in: int, rate_out: int, quality: str = QUALITY) -> Any:
    """soxr's streaming resampler (mono float32): its state carries across blocks, so a file
    resampled block by block gives the samples of resampling it whole."""
    return soxr.ResampleStream(rate_in, rate_out, 1, dtype="float32", quality=quality)


def read_mono(path: Path | str, rate: int | None = None) -> np.ndarray:
    """A file as mono float64, at `rate` when given (resampled only where it differs)."""
    samples, sr = read(path)
    x = mono(samples)
    return x if rate is None else resample(x, sr, rate)


def wav_pcm(source: Path | str | bytes, frames: bool = True) -> tuple[bytes, int, int, int]:
    """(sample bytes as stored, rate, channels, bytes a sample) of a PCM WAV file, or of its
    bytes, neither decoded nor resampled (stdlib `wave`: streaming and serving pass the stored
    bytes on); without `frames`, the header only (the sample bytes b"" and, in their place,
    nothing read). Raises one of WAV_ERRORS."""
    src = io.BytesIO(source) if isinstance(source, bytes) else str(source)
    with wave.open(src, "rb") as w:
        rate, channels, width = w.getframerate(), w.getnchannels(), w.getsampwidth()
        return (w.readframes(w.getnframes()) if frames else b""), rate, channels, width


def wav_frames(source: Path | str | bytes) -> int:
    """How many sample frames a PCM WAV (file or bytes) holds, from its header."""
    src = io.BytesIO(source) if isinstance(source, bytes) else str(source)
    with wave.open(src, "rb") as w:
        return w.getnframes()


def open_read(path: Path | str) -> Any:
    """A soundfile reader of `path` (a context manager), for reading in blocks."""
    return sf.SoundFile(str(path))


class WritableHandle(Protocol):
    """What libsndfile's virtual I/O calls to write a file: an open binary file has it."""

    def write(self, data: bytes, /) -> int: ...
    def seek(self, offset: int, whence: int = 0, /) -> int: ...
    def tell(self) -> int: ...


def open_pcm16_writer(handle: WritableHandle, rate: int) -> Any:
    """A mono 16-bit PCM WAV writer over an open binary handle (a context manager): for
    writing in blocks into an `fsio.atomic_file`."""
    return sf.SoundFile(handle, "w", samplerate=rate, channels=1, subtype=SUBTYPE, format="WAV")


def pcm16_bytes(y: np.ndarray, rate: int) -> bytes:
    """16-bit PCM WAV bytes of `y`, clipped to [-1, 1] (deterministic: no timestamps)."""
    buf = io.BytesIO()
    sf.write(buf, np.clip(y, -1.0, 1.0), rate, format="WAV", subtype=SUBTYPE)
    return buf.getvalue()


def write_pcm16(path: Path, y: np.ndarray, rate: int) -> None:
    """`pcm16_bytes` written whole (temp file, fsync, rename)."""
    atomic_write_bytes(Path(path), pcm16_bytes(y, rate))
