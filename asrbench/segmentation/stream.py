"""Read a recording in blocks, mixed to mono and resampled on the fly: never the whole file.

soundfile reads `block_s` seconds at a time; soxr's streaming resampler carries its state
between blocks, so the output equals a one-shot resampling of the whole file (sample for
sample: tested) while memory stays at a few blocks whatever the length of the recording.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from asrbench import audio
from asrbench.segmentation.records import SegmentationError

BLOCK_S = 10.0  # seconds read per block: memory is a few of these, whatever the file's length


@dataclass(frozen=True)
class AudioInfo:
    """What the file's header says: rate, channels, frames, duration in seconds."""

    path: Path
    rate: int
    channels: int
    frames: int

    @property
    def duration(self) -> float:
        return self.frames / self.rate


def info(path: Path) -> AudioInfo:
    """The header of an audio file, or a one-line error naming it."""
    try:
        meta = audio.info(path)
    except Exception as exc:  # soundfile raises several types for missing or corrupt files
        raise SegmentationError(f"{path}: not a readable audio file ({exc})") from None
    if meta.frames <= 0:
        raise SegmentationError(f"{path}: the audio is empty (0 samples)")
    return AudioInfo(Path(path), int(meta.samplerate), int(meta.channels), int(meta.frames))


def blocks(
    path: Path, rate: int, block_s: float = BLOCK_S, quality: str = "HQ"
) -> Iterator[np.ndarray]:
    """The file as float32 mono blocks at `rate` Hz, in order (the last may be shorter).

    Channels are averaged (as the importers mix down); another rate is resampled with soxr
    (`quality`; the importers use VHQ), whose stream keeps the total length equal to
    round(frames * rate / file rate).
    """
    meta = info(path)
    frames = max(1, int(block_s * meta.rate))
    stream = None
    if meta.rate != rate:
        stream = audio.resample_stream(meta.rate, rate, quality)
    with audio.open_read(path) as f:
        left = meta.frames
        for block in f.blocks(blocksize=frames, dtype="float32", always_2d=True):
            left -= len(block)
            mono = np.ascontiguousarray(block.mean(axis=1, dtype=np.float32))
            if stream is None:
                yield mono
                continue
            out = stream.resample_chunk(mono, last=left <= 0)
            if len(out):
                yield out
