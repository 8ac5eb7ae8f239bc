"""NeMo JSONL manifests: one JSON object per line with audio_filepath, text, duration, offset."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

from asrbench.importers.common import ImportProblem, Item, read_audio_file

_EXTRA = {"speaker": "SPEAKER", "gender": "GENDER", "lang": "LANGUAGE", "language": "LANGUAGE",
          "accent": "ACCENT"}


def import_nemo(manifest: Path) -> Iterator[Item]:
    """Items of a NeMo manifest; relative audio paths resolve against the manifest's folder."""
    manifest = Path(manifest)
    if not manifest.is_file():
        raise ImportProblem(f"{manifest}: not found")
    rows = []
    for lineno, line in enumerate(manifest.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{manifest}:{lineno}"
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ImportProblem(f"{where}: not valid JSON ({exc.msg})") from exc
        if not isinstance(row, dict) or "audio_filepath" not in row or "text" not in row:
            raise ImportProblem(f"{where}: needs 'audio_filepath' and 'text'")
        rows.append((where, row))
    keys_count: dict[str, int] = {}
    for _, row in rows:
        keys_count[row["audio_filepath"]] = keys_count.get(row["audio_filepath"], 0) + 1
    for where, row in rows:
        path = Path(row["audio_filepath"])
        path = path if path.is_absolute() else manifest.parent / path
        offset = row.get("offset")
        duration = row.get("duration")
        start = end = None
        if offset is not None or keys_count[row["audio_filepath"]] > 1:
            start = float(offset or 0.0)
            end = start + float(duration) if duration is not None else None
        uid = str(row.get("utt_id") or row.get("id") or path.stem)
        if start is not None and not (row.get("utt_id") or row.get("id")):
            uid = f"{uid}_{int(round(start * 1000)):08d}"
        extra = {col: str(row[k]) for k, col in _EXTRA.items() if k in row}
        yield Item(id=uid, load=lambda p=path, w=where: read_audio_file(p, w), key=str(path),
                   text=str(row["text"]), start=start, end=end, extra=extra)
