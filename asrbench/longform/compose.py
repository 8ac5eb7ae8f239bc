"""Compose long-form sessions from real utterances, with exact reference times (for the embedded
long-form sets' recipes: datasets/mini_long_en, datasets/mini_meeting_en; their folders are
written by asrbench.importers.longform.write_longform_dataset, above asrbench.dataset).

A session is a timeline of clips (one utterance each, one speaker, its words) over a bed of real
background noise at a low level, so the pauses are real room sound and not digital zero. Clip
edges are trimmed to the speech (an energy threshold) and every clip starts and lasts a whole
number of 10 ms frames, so the reference times written (`start`, `end` in seconds) are exact
to the sample and print with two decimals. Overlap (a turn starting before the other speaker's
turn ends) is allowed only across speakers, as the long-form dataset contract requires.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from asrbench import audio
from scoring.segments import Segment

RATE = 16000
FRAME = RATE // 100  # 10 ms: every start and length is a whole number of frames


@dataclass(frozen=True)
class Clip:
    """One utterance ready to place: mono float64 samples at RATE, a multiple of FRAME long."""

    speaker: str
    words: str
    samples: np.ndarray
    source: str = ""

    @property
    def frames(self) -> int:
        return len(self.samples) // FRAME


def read_mono(path: Path, rate: int = RATE) -> np.ndarray:
    """An audio file as mono float64 at `rate` (soxr VHQ where it must be resampled)."""
    return audio.read_mono(path, rate)


def trim(samples: np.ndarray, floor_db: float = -35.0, margin_frames: int = 5) -> np.ndarray:
    """Cut leading and trailing frames quieter than `floor_db` below the loudest frame, keeping
    `margin_frames` of 10 ms either side; the result is a whole number of frames long."""
    n = len(samples) // FRAME
    frames = samples[: n * FRAME].reshape(n, FRAME)
    energy = np.sqrt(np.mean(frames**2, axis=1)) + 1e-12
    loud = np.flatnonzero(20 * np.log10(energy / energy.max()) > floor_db)
    first = max(int(loud[0]) - margin_frames, 0)
    last = min(int(loud[-1]) + margin_frames + 1, n)
    return frames[first:last].reshape(-1).copy()


def noise_bed(paths: Sequence[Path], frames: int, level_dbfs: float) -> np.ndarray:
    """`frames` x 10 ms of real noise: the files one after another (repeated if too short),
    scaled to an RMS of `level_dbfs` dB full scale."""
    pieces = [read_mono(p) for p in paths]
    need = frames * FRAME
    joined = np.concatenate(pieces)
    reps = -(-need // len(joined))
    bed = np.tile(joined, reps)[:need]
    rms = float(np.sqrt(np.mean(bed**2))) or 1.0
    return bed * (10 ** (level_dbfs / 20) / rms)


@dataclass(frozen=True)
class Placed:
    """A clip at a start frame on the session's timeline."""

    clip: Clip
    start: int

    @property
    def end(self) -> int:
        return self.start + self.clip.frames


def sequence(clips: Sequence[Clip], gaps: Sequence[int], lead: int = 50) -> list[Placed]:
    """Clips one after another: clip i+1 starts `gaps[i]` frames after clip i ends; a negative
    gap (overlap) is allowed only where the speaker changes and the speaker's own last turn
    has ended."""
    if len(gaps) != max(len(clips) - 1, 0):
        raise ValueError("one gap between each pair of clips")
    placed: list[Placed] = []
    last_end: dict[str, int] = {}
    at = lead
    for i, clip in enumerate(clips):
        if i:
            at = placed[-1].end + gaps[i - 1]
        if at < last_end.get(clip.speaker, 0):
            raise ValueError(f"clip {i} of {clip.speaker} would overlap the speaker's own turn")
        placed.append(Placed(clip, at))
        last_end[clip.speaker] = at + clip.frames
    return placed


def render(
    placed: Sequence[Placed], bed: np.ndarray, tail: int = 50
) -> tuple[np.ndarray, float, int]:
    """Mix the clips over the bed: (samples, scale applied to avoid clipping, length in frames).

    The bed is cut (or must be long enough) to the last clip's end plus `tail` frames."""
    frames = max(p.end for p in placed) + tail
    if len(bed) < frames * FRAME:
        raise ValueError("noise bed shorter than the session")
    out = bed[: frames * FRAME].copy()
    for p in placed:
        out[p.start * FRAME : p.end * FRAME] += p.clip.samples
    peak = float(np.max(np.abs(out)))
    scale = min(1.0, 0.98 / peak) if peak else 1.0
    return out * scale, scale, frames


def segments(session_id: str, placed: Sequence[Placed]) -> list[Segment]:
    """The reference segments of a session, in time order; times are frames / 100 (exact)."""
    return [
        Segment(session_id, p.clip.speaker, p.start / 100, p.end / 100, p.clip.words)
        for p in sorted(placed, key=lambda p: (p.start, p.end))
    ]


def write_wav(path: Path, samples: np.ndarray) -> None:
    """16-bit PCM WAV at RATE (the format datasets hold)."""
    audio.write_pcm16(path, samples, RATE)


@dataclass(frozen=True)
class Session:
    """One composed recording: its ID, samples, reference segments and extra metadata cells."""

    id: str
    samples: np.ndarray
    segments: tuple[Segment, ...]
    extra: tuple[tuple[str, str], ...] = ()
