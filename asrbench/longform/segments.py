"""The segments file of a long-form dataset: where it is, reading it, checking it against
metadata.tsv and the audio, with every finding a `Problem` naming the file and line.

Checks (in this order; a file that does not read stops there):
- the file exists inside the dataset folder and is SegLST (`.json`) or STM (`.stm`);
- every segment: `0 <= start <= end`, its session a recording of metadata.tsv, its end inside
  that recording's audio (DURATION + the same 20 ms tolerance as DURATION against the audio);
  within a (session, speaker) sorted by start and not overlapping (speakers overlap each other);
- every recording has reference words (unless the dataset is reference-free);
- each recording's TEXT is its segments' words in time order (sorted by start, then end), so a
  path that reads TEXT and one that reads the segments score the same reference.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from asrbench.fsio import atomic_write_text
from scoring.errors import ScoringError
from scoring.segments import Segment, TimedWord
from scoring.timed import read_seglst, read_stm, timed_format, timed_text, validate_segments

if TYPE_CHECKING:
    from asrbench.dataset import Utterance

KIND = "longform"
DEFAULT_FILE = "segments.seglst.json"
_READERS = {".json": read_seglst, ".stm": read_stm}
_AT = re.compile(r"^(?P<path>.*?):(?P<line>\d+): (?P<msg>.*)$", re.S)


@dataclass(frozen=True)
class Finding:
    """One error about the segments: the fields of `asrbench.dataset.Problem`, which the loader
    makes of it (this module sits below asrbench.dataset and does not import it)."""

    path: str
    line: int
    code: str
    message: str


def is_longform(meta: dict) -> bool:
    """dataset.yaml declares `kind: longform`."""
    return meta.get("kind") == KIND


def segments_file(root: Path, meta: dict) -> Path:
    """The segments file: dataset.yaml's `segments:` (relative to the folder) or the default."""
    return root / str(meta.get("segments") or DEFAULT_FILE)


def in_time_order(segments: Sequence[Segment]) -> list[Segment]:
    """Segments sorted by start, then end (stable: file order breaks ties)."""
    return sorted(segments, key=lambda s: (s.start_time, s.end_time))


def by_session(segments: Sequence[Segment]) -> dict[str, list[Segment]]:
    """Segments grouped by session ID (sessions in order of first appearance, file order kept)."""
    out: dict[str, list[Segment]] = {}
    for seg in segments:
        out.setdefault(seg.session_id, []).append(seg)
    return out


def session_text(segments: Sequence[Segment]) -> str:
    """A recording's whole reference: its segments' words in time order, single-spaced."""
    return " ".join(w for s in in_time_order(segments) for w in s.words.split())


def load_segments(
    root: Path, meta: dict, rows: Sequence[Utterance], problems: list[Finding], tolerance: float
) -> list[Segment]:
    """Read and check the segments file of a long-form dataset; findings go to `problems`."""
    path = segments_file(root, meta)
    where = _locate(root, path, problems)
    if where is None:
        return []
    try:
        segments = _READERS[path.suffix.lower()](path)
        validate_segments(
            segments,
            durations={u.id: u.duration for u in rows},
            source=str(path),
            require_words=meta.get("reference_free") is not True,
            tolerance=tolerance,
        )
    except ScoringError as exc:
        problems.append(_problem(path, exc))
        return []
    _check_text(root / "metadata.tsv", rows, segments, problems)
    return segments


def _locate(root: Path, path: Path, problems: list[Finding]) -> Path | None:
    if path.resolve().parent != root.resolve():
        problems.append(
            Finding(
                str(root / "dataset.yaml"),
                0,
                "segments",
                f"segments: {str(path)!r} is not a file in the dataset folder; name one beside "
                "metadata.tsv",
            )
        )
        return None
    if path.suffix.lower() not in _READERS:
        problems.append(
            Finding(
                str(path),
                0,
                "segments",
                "the segments file must be SegLST (.json, .seglst.json) or STM (.stm); convert "
                "it with `ops/import longform`",
            )
        )
        return None
    if not path.is_file():
        problems.append(
            Finding(
                str(path),
                0,
                "missing-file",
                "dataset.yaml says kind: longform but the segments file is missing; write it "
                "(see docs/DATASETS.md, Long-form datasets)",
            )
        )
        return None
    return path


def _problem(path: Path, exc: ScoringError) -> Finding:
    """A scorer error `FILE:LINE: message` as a finding on that file and line."""
    text = str(exc)
    m = _AT.match(text)
    if m and m["path"] == str(path):
        return Finding(str(path), int(m["line"]), "segments", m["msg"])
    return Finding(str(path), 0, "segments", text.removeprefix(f"{path}: "))


def _check_text(
    meta_path: Path, rows: Sequence[Utterance], segments: Sequence[Segment], problems: list[Finding]
) -> None:
    groups = by_session(segments)
    for utt in rows:
        expected = session_text(groups.get(utt.id, []))
        if " ".join(utt.text.split()) != expected:
            problems.append(
                Finding(
                    str(meta_path),
                    utt.line,
                    "longform-text",
                    f"{utt.id}: TEXT is not the segments' words in time order (segments give "
                    f"{expected[:60]!r}...); rewrite TEXT from the segments "
                    f"(asrbench.longform.segments.session_text)",
                )
            )


def write_timed(
    path: Path, items: Sequence[Segment] | Sequence[TimedWord], fmt: str | None = None
) -> None:
    """Write segments (STM, SegLST, RTTM) or words (CTM) by the extension of `path` or `fmt`,
    atomically (asrbench.fsio): a reader never sees half a file."""
    atomic_write_text(Path(path), timed_text(items, fmt or timed_format(path)))
