"""NeMo JSONL manifests: one JSON object per line with audio_filepath, text, duration, offset."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

from asrbench.importers.common import (
    ImportProblem,
    Item,
    file_loader,
    inside,
    read_text_file,
    seconds_cell,
    text_cell,
)

_EXTRA = {
    "speaker": "SPEAKER",
    "gender": "GENDER",
    "lang": "LANGUAGE",
    "language": "LANGUAGE",
    "accent": "ACCENT",
}


def import_nemo(manifest: Path, audio_root: Path | None = None) -> Iterator[Item]:
    """Items of a NeMo manifest. Audio paths (relative ones against the manifest's folder) must
    lie inside `audio_root` (default: the manifest's folder)."""
    manifest = Path(manifest)
    if not manifest.is_file():
        raise ImportProblem(f"{manifest}: not found")
    root = Path(audio_root) if audio_root else manifest.parent
    hint = f" or pass --audio-root FOLDER holding it (now {root})"
    rows = []
    for lineno, line in enumerate(read_text_file(manifest).splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{manifest}:{lineno}"
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ImportProblem(f"{where}: not valid JSON ({exc.msg})") from exc
        if not isinstance(row, dict) or "audio_filepath" not in row or "text" not in row:
            raise ImportProblem(f"{where}: needs 'audio_filepath' and 'text'")
        if not isinstance(row["audio_filepath"], str) or not row["audio_filepath"]:
            raise ImportProblem(f"{where}: 'audio_filepath' must be a non-empty string")
        text_cell(row["text"], where, "text")
        offset = seconds_cell(row.get("offset"), where, "offset")
        duration = seconds_cell(row.get("duration"), where, "duration")
        path = inside(root, row["audio_filepath"], where, hint, base=manifest.parent)
        rows.append((where, row, path, offset, duration))
    keys_count: dict[str, int] = {}
    for _, row, *_ in rows:
        keys_count[row["audio_filepath"]] = keys_count.get(row["audio_filepath"], 0) + 1
    for where, row, path, offset, duration in rows:
        start = end = None
        if offset is not None or keys_count[row["audio_filepath"]] > 1:
            start = offset or 0.0
            end = start + duration if duration is not None else None
        uid = str(row.get("utt_id") or row.get("id") or path.stem)
        if start is not None and not (row.get("utt_id") or row.get("id")):
            uid = f"{uid}_{int(round(start * 1000)):08d}"
        extra = {col: str(row[k]) for k, col in _EXTRA.items() if k in row}
        yield Item(
            id=uid,
            load=file_loader(path, where),
            key=str(path),
            text=row["text"],
            start=start,
            end=end,
            extra=extra,
            where=where,
        )
