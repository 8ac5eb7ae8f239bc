"""What every importer shares: reading any audio, converting it, writing the dataset folder."""

from __future__ import annotations

import io
import os
import re
import shutil
import subprocess
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import soundfile as sf
import soxr

from asrbench.dataset import DatasetError, Utterance, load_dataset
from asrbench.dataset import write_dataset as save_dataset
from asrbench.errors import InputError

_ID_BAD = re.compile(r"[^A-Za-z0-9_.\-]")
FFMPEG_TIMEOUT_S = 600


class ImportProblem(InputError):
    """Input that cannot be imported; the message names the file, line or utterance ID."""


@dataclass
class Item:
    """One utterance to import: where its audio comes from, its text and labels.

    `load` returns (samples as float32 [frames, channels], sample rate); `key` identifies the
    recording so that segments of one recording decode it once. start/end cut a segment (s).
    """

    id: str
    load: Callable[[], tuple[np.ndarray, int]]
    key: str
    text: str
    start: float | None = None
    end: float | None = None
    extra: dict[str, str] = field(default_factory=dict)


def clean_id(raw: str) -> str:
    """A dataset ID from a source ID: characters outside [A-Za-z0-9_.-] become '_'."""
    out = _ID_BAD.sub("_", raw.strip())
    if not out or not out[0].isalnum():
        out = "u" + out
    return out


def clean_text(text: str) -> str:
    """Tabs and newlines would break metadata.tsv: fold them into spaces."""
    return " ".join(text.split())


def decode_bytes(data: bytes, label: str) -> tuple[np.ndarray, int]:
    """Decode audio bytes (any format libsndfile reads)."""
    try:
        samples, rate = sf.read(io.BytesIO(data), dtype="float32", always_2d=True)
    except Exception as exc:  # soundfile raises several types on bad input
        raise ImportProblem(f"{label}: cannot decode audio ({exc})") from exc
    return samples, rate


def read_audio_file(path: Path, label: str) -> tuple[np.ndarray, int]:
    """Decode a file with libsndfile; formats it lacks (m4a, ...) go through ffmpeg if present."""
    if not path.is_file():
        raise ImportProblem(f"{label}: audio file {path} not found")
    try:
        samples, rate = sf.read(str(path), dtype="float32", always_2d=True)
        return samples, rate
    except Exception as exc:  # unsupported format or corrupt file
        ffmpeg = shutil.which("ffmpeg")
        if not ffmpeg:
            raise ImportProblem(f"{label}: cannot read {path} ({exc}); install ffmpeg for "
                                "formats libsndfile does not read") from exc
    # No shell: the path is one argument whatever characters it holds.
    proc = subprocess.run(
        [ffmpeg, "-nostdin", "-v", "error", "-i", str(path), "-f", "wav", "-acodec", "pcm_f32le",
         "-"], capture_output=True, timeout=FFMPEG_TIMEOUT_S, check=False,
    )
    if proc.returncode != 0:
        raise ImportProblem(f"{label}: ffmpeg cannot decode {path}: "
                            f"{proc.stderr.decode(errors='replace').strip()[-300:]}")
    return decode_bytes(proc.stdout, label)


def convert(samples: np.ndarray, rate: int, target: int) -> np.ndarray:
    """Mix down to mono (mean of channels) and resample (soxr, high quality) to `target` Hz."""
    mono = samples.mean(axis=1) if samples.ndim == 2 else samples
    if rate != target:
        mono = soxr.resample(mono, rate, target, quality="VHQ")
    return np.clip(mono, -1.0, 1.0).astype(np.float32)


def write_dataset(out: Path, items: Iterable[Item], *, dataset_id: str, rate: int = 16000,
                  language: str = "en", description: str = "", source: str = "",
                  licence: str = "unknown", force: bool = False) -> Path:
    """Convert every item and write a validated dataset at `out`, atomically.

    Problems are collected over all items and raised together, naming each utterance.
    """
    out = Path(out)
    if out.exists() and not force:
        raise ImportProblem(f"{out} already exists; pass --force to replace it")
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = out.with_name(f".{out.name}.importing-{os.getpid()}")
    if staging.exists():
        shutil.rmtree(staging)
    (staging / "audio").mkdir(parents=True)
    problems: list[str] = []
    rows: list[Utterance] = []
    extra_cols: list[str] = []
    seen: dict[str, str] = {}
    cached_key, cached = None, None
    try:
        for item in items:
            uid = clean_id(item.id)
            if uid in seen:
                problems.append(f"{item.id}: ID {uid!r} already used by {seen[uid]!r}")
                continue
            seen[uid] = item.id
            try:
                if item.key != cached_key:
                    cached_key, cached = item.key, item.load()
                samples, src_rate = cached  # type: ignore[misc]
                if item.start is not None:
                    a = int(round(item.start * src_rate))
                    b = len(samples) if item.end is None else int(round(item.end * src_rate))
                    if not 0 <= a < b <= len(samples) + int(0.01 * src_rate):
                        raise ImportProblem(
                            f"{item.id}: segment {item.start}-{item.end} s lies outside the "
                            f"recording ({len(samples) / src_rate:.3f} s)")
                    samples = samples[a:b]
                audio = convert(samples, src_rate, rate)
            except ImportProblem as exc:
                problems.append(str(exc))
                continue
            if len(audio) == 0:
                problems.append(f"{item.id}: empty audio")
                continue
            rel = f"audio/{uid}.wav"
            sf.write(staging / rel, audio, rate, subtype="PCM_16")
            for k in item.extra:
                if k not in extra_cols:
                    extra_cols.append(k)
            rows.append(Utterance(uid, rel, len(audio) / rate, clean_text(item.text),
                                  {k: clean_text(v) for k, v in item.extra.items()}))
        if problems:
            head = "\n  ".join(problems[:30])
            more = f"\n  ... and {len(problems) - 30} more" if len(problems) > 30 else ""
            raise ImportProblem(f"{len(problems)} problem(s); nothing written:\n  {head}{more}")
        if not rows:
            raise ImportProblem("no utterances to import")
        meta = {"id": dataset_id, "language": language, "sample_rate": rate,
                "licence": licence, "source": source,
                "description": description or f"imported from {source}"}
        save_dataset(staging, meta, ["ID", "AUDIO", "DURATION", "TEXT", *extra_cols], rows)
        try:
            load_dataset(staging)
        except DatasetError as exc:
            raise ImportProblem(f"the imported dataset does not validate:\n{exc}") from exc
        if out.exists():
            shutil.rmtree(out)
        os.rename(staging, out)
        return out
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)
