"""What every importer shares: reading any audio, converting it, writing the dataset folder."""

from __future__ import annotations

import contextlib
import functools
import re
import shutil
import subprocess
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

from asrbench import audio
from asrbench.dataset import _CONTROL_RE as CONTROL_CHARACTER
from asrbench.dataset import (
    DatasetError,
    Utterance,
    check_dataset_id,
    load_dataset,
    write_dataset,
)
from asrbench.entries import check_out
from asrbench.errors import InputError
from asrbench.fsio import clean_stale, disk_full_is_one_line, replace_dir, stage_dir
from asrbench.ids import contained

_ID_BAD = re.compile(r"[^A-Za-z0-9_.\-]")
FFMPEG_TIMEOUT_S = 600
MIN_RATE, MAX_RATE = 1000, 384000
SEGMENT_SLACK_S = 0.01  # a segment may end this far past its recording (rounding in manifests)


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
    where: str = ""  # file:line (or file) of the entry, for error messages
    # the file `load` decodes, when it is one whole recording: converted in blocks if
    # libsndfile reads it (asrbench.importers.common.write_item_audio)
    path: Path | None = None

    @property
    def label(self) -> str:
        return f"{self.where}: {self.id}" if self.where else self.id


def inside(
    root: Path,
    rel: str,
    where: str,
    hint: str = "",
    base: Path | None = None,
    keep: str = "the manifest's folder",
) -> Path:
    """`base / rel` (base defaults to root) if it stays inside `root` (symlinks followed), else
    an ImportProblem naming the entry as written (and where to `keep` the audio)."""
    path = Path(rel)
    full = path if path.is_absolute() else (base or root) / path
    if not contained(root, full):
        raise ImportProblem(
            f"{where}: {rel!r} points outside {root}; keep the audio inside {keep}{hint}"
        )
    return full


def text_cell(value: object, where: str, column: str) -> str:
    """A transcript from a manifest cell: a string (None and numbers are refused, not 'None')."""
    if isinstance(value, str):
        return value
    what = "null" if value is None else f"a {type(value).__name__} ({value!r})"
    raise ImportProblem(
        f'{where}: {column!r} is {what}; it must be a string (use "" for no '
        "transcript and import with --reference-free)"
    )


def seconds_cell(value: object, where: str, column: str) -> float | None:
    """A time in seconds from a manifest cell (None stays None); anything else is an error."""
    if value is None or value == "":
        return None
    try:
        out = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        out = float("nan")
    if not out >= 0 or out == float("inf"):
        raise ImportProblem(
            f"{where}: {column!r} is {value!r}; it must be a non-negative number of seconds"
        )
    return out


def check_rate(rate: int) -> int:
    if not isinstance(rate, int) or not MIN_RATE <= rate <= MAX_RATE:
        raise ImportProblem(
            f"--rate {rate}: the sample rate must be a whole number of Hz between "
            f"{MIN_RATE} and {MAX_RATE}, e.g. --rate 16000"
        )
    return rate


def read_text_file(path: Path) -> str:
    """A UTF-8 text file (a BOM is accepted); other encodings get a one-line error with the fix."""
    data = Path(path).read_bytes()
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise ImportProblem(
            f"{path}:{line}: not valid UTF-8 (byte {data[exc.start]:#04x}); "
            "re-encode the file as UTF-8, e.g. `iconv -f latin1 -t utf-8 "
            f"{Path(path).name} > fixed.{Path(path).suffix.lstrip('.') or 'txt'}`"
        ) from None


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
        samples, rate = audio.decode(data)
    except Exception as exc:  # soundfile raises several types on bad input
        raise ImportProblem(f"{label}: cannot decode audio ({exc})") from exc
    return samples, rate


def read_audio_file(path: Path, label: str) -> tuple[np.ndarray, int]:
    """Decode a file with libsndfile; formats it lacks (m4a, ...) go through ffmpeg if present."""
    if not path.is_file():
        raise ImportProblem(f"{label}: audio file {path} not found")
    try:
        samples, rate = audio.read(path, dtype="float32")
        return samples, rate
    except Exception as exc:  # unsupported format or corrupt file
        ffmpeg = shutil.which("ffmpeg")
        if not ffmpeg:
            raise ImportProblem(
                f"{label}: cannot read {path} ({exc}); install ffmpeg for "
                "formats libsndfile does not read"
            ) from exc
    # No shell: the path is one argument whatever characters it holds.
    proc = subprocess.run(
        [
            ffmpeg,
            "-nostdin",
            "-v",
            "error",
            "-i",
            str(path),
            "-f",
            "wav",
            "-acodec",
            "pcm_f32le",
            "-",
        ],
        capture_output=True,
        timeout=FFMPEG_TIMEOUT_S,
        check=False,
    )
    if proc.returncode != 0:
        raise ImportProblem(
            f"{label}: ffmpeg cannot decode {path}: "
            f"{proc.stderr.decode(errors='replace').strip()[-300:]}"
        )
    return decode_bytes(proc.stdout, label)


def file_loader(path: Path, label: str) -> Callable[[], tuple[np.ndarray, int]]:
    """An `Item.load` that decodes `path` when called (`read_audio_file`, `label` in errors)."""
    return functools.partial(read_audio_file, path, label)


def convert(samples: np.ndarray, rate: int, target: int) -> np.ndarray:
    """Mix down to mono (mean of channels) and resample (soxr, high quality) to `target` Hz."""
    mono = audio.resample(audio.mono(samples), rate, target)
    return np.clip(mono, -1.0, 1.0).astype(np.float32)


def check_out_folder(out: Path, force: bool) -> None:
    """`--out` of every import: refused when it exists, unless `--force` and it holds a dataset
    or nothing (`entries.check_out`), as an ImportProblem."""
    try:
        check_out(out, "dataset", force)
    except InputError as exc:
        raise ImportProblem(str(exc)) from None


def _refused(item: Item, uid: str, seen: dict[str, str], reference_free: bool) -> str | None:
    """Why `item` cannot be imported before its audio is read (a duplicate ID, a transcript in
    a reference-free import, a control character), or None."""
    if uid in seen:
        return (
            f"{item.label}: ID {uid!r} already used by {seen[uid]}; IDs "
            "must be unique across the whole dataset (all splits)"
        )
    if reference_free and item.text.strip():
        return (
            f"{item.label}: has a transcript but the import is "
            "--reference-free; drop the flag or the text"
        )
    for name, value in (("transcript", item.text), *item.extra.items()):
        m = CONTROL_CHARACTER.search(clean_text(value))
        if m:  # else the error would name the staging folder's metadata.tsv
            return (
                f"{item.label}: the {name} holds the control character U+{ord(m.group()):04X} "
                f"at character {m.start() + 1}; remove it (it is no part of a transcript)"
            )
    return None


def write_item_audio(
    item: Item, dest: Path, rate: int, decoded: dict[str, tuple[np.ndarray, int]]
) -> int:
    """Convert `item`'s audio to a 16-bit mono WAV at `dest` (`rate` Hz); returns its frames.

    A whole recording in a file libsndfile reads (`item.path`) is converted in blocks, never
    held whole (a 1-hour meeting is 230 MB as float32, several times over while converted).
    Anything else is decoded whole, once per recording (`decoded` keeps the last one, for the
    segments of one recording that follow each other), then cut and converted.
    """
    if item.path is not None and item.start is None:
        frames = _stream_convert(item.path, rate, dest)
        if frames:
            return frames
    if item.key not in decoded:
        decoded.clear()
        decoded[item.key] = item.load()
    samples, src_rate = decoded[item.key]
    if item.start is not None:
        samples = _cut(item, samples, src_rate)
    audio = convert(samples, src_rate, rate)
    if len(audio) == 0:
        raise ImportProblem(f"{item.label}: empty audio (0 samples)")
    with wav_writer(dest, rate) as out:
        out.write(audio)
    return len(audio)


def _cut(item: Item, samples: np.ndarray, src_rate: int) -> np.ndarray:
    """The samples of `item`'s segment (start/end in seconds) of its decoded recording."""
    a = int(round(item.start * src_rate))  # type: ignore[operator]
    b = len(samples) if item.end is None else int(round(item.end * src_rate))
    if not 0 <= a < b <= len(samples) + int(SEGMENT_SLACK_S * src_rate):
        raise ImportProblem(
            f"{item.label}: segment {item.start:.3f}-"
            f"{'end' if item.end is None else f'{item.end:.3f}'} s lies outside "
            f"its recording {item.key} ({len(samples) / src_rate:.3f} s); fix "
            "the segment times"
        )
    return samples[a:b]


def _stream_convert(path: Path, rate: int, dest: Path) -> int | None:
    """`path` converted as `convert` does (mono, soxr VHQ, clipped) in blocks into the WAV
    `dest`; returns its frames, or None when libsndfile cannot read the file (the caller
    decodes it whole, through ffmpeg where needed). The output equals `convert`'s, sample for
    sample: soxr's stream keeps its state between blocks."""
    from asrbench.segmentation.records import SegmentationError
    from asrbench.segmentation.stream import blocks, info

    try:
        info(path)
    except SegmentationError:  # not a format libsndfile reads, or empty
        return None
    frames = 0
    with wav_writer(dest, rate) as out:
        for block in blocks(path, rate, quality="VHQ"):
            out.write(np.clip(block, -1.0, 1.0))
            frames += len(block)
    return frames


class _KeepsErrors:
    """A file for libsndfile's virtual I/O that keeps the OSError of a failed write or seek:
    libsndfile reports any of them as "System error.", which says nothing of a full disk."""

    def __init__(self, f: BinaryIO):
        self.f = f
        self.error: OSError | None = None

    def _call(self, fn: Callable, *args: object, failed: int) -> int:
        try:
            return fn(*args)
        except OSError as exc:
            self.error = self.error or exc
            return failed

    def write(self, data: bytes) -> int:
        return self._call(self.f.write, data, failed=0)

    def seek(self, offset: int, whence: int = 0) -> int:
        return self._call(self.f.seek, offset, whence, failed=-1)

    def tell(self) -> int:
        return self._call(self.f.tell, failed=-1)


@contextlib.contextmanager
def wav_writer(path: Path, rate: int) -> Iterator[Any]:
    """A 16-bit PCM mono WAV written at `path`; a write that fails (a full disk) raises its own
    OSError naming `path`, which `fsio.disk_full_is_one_line` turns into the one-line error."""
    with open(path, "wb") as f:
        sink = _KeepsErrors(f)
        try:
            with audio.open_pcm16_writer(sink, rate) as out:
                yield out
        except audio.SoundFileError:
            if sink.error is None:
                raise
            raise OSError(sink.error.errno, sink.error.strerror, str(path)) from None


def build_dataset(
    out: Path,
    items: Iterable[Item],
    *,
    dataset_id: str,
    rate: int = 16000,
    language: str = "en",
    description: str = "",
    source: str = "",
    licence: str = "unknown",
    force: bool = False,
    reference_free: bool = False,
    meta: dict | None = None,
) -> Path:
    """Build a new dataset folder at `out` from importer items: audio converted to WAV, rows
    written by `asrbench.dataset.write_dataset` (the format writer, which takes rows whose audio
    is already in place), validated, and moved into place whole.

    Problems are collected over all items and raised together, naming each utterance; nothing
    is left at `out` (or beside it) unless the whole dataset validates. `meta` adds keys to
    dataset.yaml (citation, url, archives...). `reference_free` declares a dataset with no TEXT.
    """
    out = Path(out)
    check_dataset_id(dataset_id)
    check_rate(rate)
    check_out_folder(out, force)
    clean_stale(out, ("importing-",))  # left by an import of an earlier version killed with SIGKILL
    staging = stage_dir(out)
    (staging / "audio").mkdir()
    problems: list[str] = []
    rows: list[Utterance] = []
    extra_cols: list[str] = []
    seen: dict[str, str] = {}
    decoded: dict[str, tuple[np.ndarray, int]] = {}  # the last recording decoded whole
    try:
        with disk_full_is_one_line(staging):  # the WAVs are written by libsndfile
            for item in items:
                uid = clean_id(item.id)
                problem = _refused(item, uid, seen, reference_free)
                seen.setdefault(uid, item.label)
                if problem is None:
                    rel = f"audio/{uid}.wav"
                    try:
                        frames = write_item_audio(item, staging / rel, rate, decoded)
                    except ImportProblem as exc:
                        problem = str(exc)
                if problem is not None:
                    problems.append(problem)
                    continue
                extra_cols.extend(k for k in item.extra if k not in extra_cols)
                rows.append(
                    Utterance(
                        uid,
                        rel,
                        frames / rate,
                        clean_text(item.text),
                        {k: clean_text(v) for k, v in item.extra.items()},
                    )
                )
        if problems:
            head = "\n  ".join(problems[:30])
            more = f"\n  ... and {len(problems) - 30} more" if len(problems) > 30 else ""
            raise ImportProblem(f"{len(problems)} problem(s); nothing written:\n  {head}{more}")
        if not rows:
            raise ImportProblem("no utterances to import")
        card = {
            "id": dataset_id,
            "language": language,
            "sample_rate": rate,
            "licence": licence,
            "source": source,
            "description": description or f"imported from {source}",
        }
        if reference_free:
            card["reference_free"] = True
        card.update(meta or {})
        write_dataset(staging, card, ["ID", "AUDIO", "DURATION", "TEXT", *extra_cols], rows)
        try:
            load_dataset(staging)
        except DatasetError as exc:
            raise ImportProblem(f"the imported dataset does not validate:\n{exc}") from exc
        return replace_dir(staging, out)
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)
