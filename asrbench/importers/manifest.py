"""A generic manifest (CSV, TSV or JSON Lines) with a column mapping: `--map audio=path
--map text=sentence --map speaker=client`. Audio paths resolve against --audio-root (default:
the manifest's folder) and must stay inside it."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator
from pathlib import Path

from asrbench.errors import InputError
from asrbench.importers.common import (
    ImportProblem,
    Item,
    file_loader,
    inside,
    read_text_file,
    seconds_cell,
    text_cell,
)

FIELDS = (
    "audio",
    "text",
    "id",
    "speaker",
    "gender",
    "accent",
    "language",
    "start",
    "end",
    "duration",
)
DEFAULTS = {
    "audio": ("audio", "path", "file", "audio_filepath", "wav", "filename"),
    "text": ("text", "sentence", "transcript", "transcription"),
    "id": ("id", "utt_id", "key"),
    "speaker": ("speaker", "speaker_id"),
    "gender": ("gender",),
    "accent": ("accent",),
    "language": ("language", "locale"),
    "start": ("start", "offset"),
    "end": ("end",),
    "duration": ("duration",),
}
LABELS = {"speaker": "SPEAKER", "gender": "GENDER", "accent": "ACCENT", "language": "LANGUAGE"}


def parse_mapping(values: list[str]) -> dict[str, str]:
    """`FIELD=COLUMN` options -> {field: column}."""
    out = {}
    for v in values:
        key, _, col = v.partition("=")
        if key not in FIELDS or not col:
            raise InputError(
                f"--map {v!r}: write FIELD=COLUMN with FIELD one of {', '.join(FIELDS)}"
            )
        out[key] = col
    return out


def _rows(path: Path) -> Iterator[tuple[str, dict]]:
    text = read_text_file(path)
    if path.suffix.lower() in (".jsonl", ".json", ".ndjson"):
        for lineno, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise ImportProblem(f"{path}:{lineno}: not valid JSON ({exc.msg})") from None
            if not isinstance(row, dict):
                raise ImportProblem(f"{path}:{lineno}: each line must be a JSON object")
            yield f"{path}:{lineno}", row
        return
    delimiter = "\t" if path.suffix.lower() in (".tsv", ".tab", ".txt") else ","
    reader = csv.DictReader(io.StringIO(text, newline=""), delimiter=delimiter)
    for lineno, row in enumerate(reader, start=2):
        yield f"{path}:{lineno}", row


def import_manifest(
    path: Path,
    mapping: dict[str, str] | None = None,
    audio_root: Path | None = None,
    reference_free: bool = False,
) -> Iterator[Item]:
    """Items of a CSV/TSV/JSONL manifest; columns found through `mapping` or common names."""
    path = Path(path)
    if not path.is_file():
        raise ImportProblem(f"{path}: not found")
    root = Path(audio_root) if audio_root else path.parent
    mapping = mapping or {}
    cols: dict[str, str] | None = None
    for where, row in _rows(path):
        if cols is None:
            cols = {}
            for f in FIELDS:
                col = mapping.get(f) or next((c for c in DEFAULTS[f] if c in row), None)
                if f in mapping and mapping[f] not in row:
                    raise ImportProblem(
                        f"{where}: --map {f}={mapping[f]}: no such column ({', '.join(row)})"
                    )
                if col:
                    cols[f] = col
            need = ("audio",) if reference_free else ("audio", "text")
            missing = [f for f in need if f not in cols]
            if missing:
                raise ImportProblem(
                    f"{path}: no column for {', '.join(missing)} (columns: "
                    f"{', '.join(row)}); pass --map FIELD=COLUMN"
                )
        rel = row.get(cols["audio"])
        if not isinstance(rel, str) or not rel:
            raise ImportProblem(f"{where}: {cols['audio']!r} must be a non-empty path")
        audio = inside(root, rel, where, f" or pass --audio-root (now {root})")
        text = text_cell(row.get(cols["text"]), where, cols["text"]) if "text" in cols else ""
        start = seconds_cell(row.get(cols.get("start", "")), where, cols.get("start", "start"))
        end = seconds_cell(row.get(cols.get("end", "")), where, cols.get("end", "end"))
        dur = seconds_cell(
            row.get(cols.get("duration", "")), where, cols.get("duration", "duration")
        )
        if end is None and start is not None and dur is not None:
            end = start + dur
        if end is not None and start is None:
            start = 0.0
        uid = row.get(cols["id"]) if "id" in cols else None
        if uid in (None, ""):
            uid = Path(rel).with_suffix("").as_posix().replace("/", "_")
            if start is not None:
                uid = f"{uid}_{round(start * 1000):08d}"
        extra = {LABELS[f]: str(row.get(cols[f]) or "") for f in LABELS if f in cols}
        yield Item(
            id=str(uid),
            load=file_loader(audio, where),
            key=str(audio),
            text=text,
            start=start,
            end=end,
            extra=extra,
            where=where,
        )
