"""A folder of audio plus a transcript table (TSV or CSV with a header row)."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from pathlib import Path

from asrbench.importers.common import (
    ImportProblem,
    Item,
    file_loader,
    inside,
    read_text_file,
)

FILE_COLUMNS = ("file", "path", "audio", "filename", "wav", "audio_filepath")
TEXT_COLUMNS = ("text", "transcript", "transcription", "sentence", "normalized_text")


def _metadata_columns(table: Path, header: list[str], used: dict[str, str | None]) -> list[str]:
    """The table's columns that become upper-case metadata columns. A `duration` column is
    left out (DURATION is measured from the converted audio); a column that would name a
    dataset column twice (`file` and `audio`, `speaker` and `Speaker`) is an error."""
    taken = {k: v for k, v in used.items() if v}  # upper-case name -> the table's column
    out = []
    for h in header:
        if h in used.values() or h.upper() == "DURATION":
            continue
        first = taken.get(h.upper())
        if first is not None:
            raise ImportProblem(
                f"{table}:1: columns {first!r} and {h!r} both give {h.upper()}; keep one of them"
            )
        taken[h.upper()] = h
        out.append(h)
    return out


def import_folder(audio_dir: Path, table: Path) -> Iterator[Item]:
    """Items from `table`: a file column (relative to `audio_dir`), a text column; any other
    column (speaker, gender, accent...) becomes an upper-case metadata column."""
    audio_dir, table = Path(audio_dir), Path(table)
    if not table.is_file():
        raise ImportProblem(f"{table}: not found")
    delimiter = "," if table.suffix.lower() == ".csv" else "\t"
    with io.StringIO(read_text_file(table), newline="") as f:
        reader = csv.DictReader(f, delimiter=delimiter)
        header = [h.strip() for h in (reader.fieldnames or [])]
        lower = {h.lower(): h for h in header}
        file_col = next((lower[c] for c in FILE_COLUMNS if c in lower), None)
        text_col = next((lower[c] for c in TEXT_COLUMNS if c in lower), None)
        id_col = lower.get("id")
        if not file_col or not text_col:
            raise ImportProblem(
                f"{table}:1: header needs a file column ({', '.join(FILE_COLUMNS)})"
                f" and a text column ({', '.join(TEXT_COLUMNS)}); got {header}"
            )
        rows = list(enumerate(reader, start=2))
    others = _metadata_columns(table, header, {"ID": id_col, "AUDIO": file_col, "TEXT": text_col})
    for lineno, row in rows:
        rel = (row.get(file_col) or "").strip()
        where = f"{table}:{lineno}"
        if not rel:
            raise ImportProblem(f"{where}: empty {file_col}")
        path = Path(rel)
        if path.is_absolute() or ".." in path.parts:
            raise ImportProblem(f"{where}: {rel!r} must be relative to {audio_dir} and stay in it")
        full = inside(audio_dir, rel, where)  # a symlink out of the folder is refused too
        uid = (row.get(id_col) or "").strip() if id_col else ""
        uid = uid or path.with_suffix("").as_posix().replace("/", "_")
        extra = {h.upper(): (row.get(h) or "").strip() for h in others}
        yield Item(
            id=uid,
            load=file_loader(full, where),
            key=str(full),
            text=row.get(text_col) or "",
            extra=extra,
            where=where,
        )
