"""Write the audio of each span to its own WAV file, in one streamed pass over the recording.

Spans may overlap (windows): every block read is copied into each span it meets, so at most
the spans open at one time hold a file handle, and memory stays at one block. Each file is
16-bit PCM mono at `rate` (the model card's `sample_rate`), placed atomically
(`asrbench.fsio.atomic_file`): a crash never leaves a half-written segment under its name.
Span [start, end) maps to samples [round(start * rate), round(end * rate)).
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from asrbench import audio
from asrbench.fsio import atomic_file
from asrbench.segmentation.records import SegmentationError, Span
from asrbench.segmentation.stream import BLOCK_S, blocks


@dataclass(frozen=True)
class CutFile:
    """One span's audio file."""

    span: Span
    path: Path
    samples: int


class _Open:
    """A span's file while its samples arrive: a temp file renamed into place on close."""

    def __init__(self, path: Path, rate: int):
        self.stack = ExitStack()
        handle = self.stack.enter_context(atomic_file(path))
        self.sound = self.stack.enter_context(audio.open_pcm16_writer(handle, rate))
        self.samples = 0

    def write(self, data: np.ndarray) -> None:
        self.sound.write(data)
        self.samples += len(data)


def cut_spans(
    path: Path,
    spans: Sequence[Span],
    out_dir: Path,
    rate: int,
    stem: str = "seg",
    block_s: float = BLOCK_S,
) -> list[CutFile]:
    """Write `out_dir/<stem>_<k:05d>.wav` for span k (spans in the order given)."""
    bounds = [(round(s.start * rate), round(s.end * rate)) for s in spans]
    names = [Path(out_dir) / f"{stem}_{k:05d}.wav" for k in range(len(spans))]
    samples: dict[int, int] = {}
    with ExitStack() as outer:
        writers: dict[int, _Open] = {}
        pos = 0
        for block in blocks(path, rate, block_s):
            end = pos + len(block)
            for k, (a, b) in enumerate(bounds):
                if k in samples or not (a < end and b > pos):
                    continue
                if k not in writers:
                    writers[k] = _Open(names[k], rate)
                    # on an error the temp file is removed, never renamed into place
                    outer.push(writers[k].stack.__exit__)
                writers[k].write(block[max(a - pos, 0) : min(b - pos, len(block))])
                if b <= end:
                    samples[k] = _close(writers.pop(k))
            pos = end
        for k in list(writers):  # a span reaching past the end of the audio ends with it
            samples[k] = _close(writers.pop(k))
    missing = [spans[k] for k in range(len(spans)) if k not in samples]
    if missing:
        raise SegmentationError(
            f"{path}: {len(missing)} span(s) start after the end of the audio "
            f"({pos / rate:.3f} s), first {missing[0].start:.3f}-{missing[0].end:.3f} s"
        )
    return [CutFile(s, names[k], samples[k]) for k, s in enumerate(spans)]


def _close(writer: _Open) -> int:
    writer.stack.close()
    return writer.samples
