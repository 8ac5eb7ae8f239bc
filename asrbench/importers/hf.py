"""Hugging Face datasets on disk: a `save_to_disk` folder (Arrow, one split or a DatasetDict)
or parquet files (the Hub's layout). Read with `datasets` / `pyarrow`; the audio column's bytes
are decoded here with libsndfile (ffmpeg for the rest), so nothing needs a network or torch."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from asrbench.importers.common import ImportProblem, Item, decode_bytes, inside, read_audio_file

TEXT_COLUMNS = ("text", "sentence", "transcription", "transcript", "raw_text", "normalized_text")
ID_COLUMNS = ("id", "utt_id", "audio_id", "segment_id", "key")
_EXTRA = {
    "speaker_id": "SPEAKER",
    "speaker": "SPEAKER",
    "client_id": "SPEAKER",
    "gender": "GENDER",
    "accent": "ACCENT",
    "accents": "ACCENT",
    "language": "LANGUAGE",
    "locale": "LANGUAGE",
    "lang": "LANGUAGE",
}
_GENDER = {"male": "M", "female": "F", "m": "M", "f": "F"}
_PARQUET_SPLIT = re.compile(r"^([A-Za-z0-9_.]+?)-\d{5}-of-\d{5}\.parquet$")
BATCH = 64


def _splits(root: Path, split: str | None) -> list[tuple[str, object, dict]]:
    """[(split name, pyarrow batch source, {column: label names})] of a saved dataset."""
    import datasets

    if root.is_dir() and (
        (root / "dataset_dict.json").is_file() or (root / "state.json").is_file()
    ):
        loaded = datasets.load_from_disk(str(root))
        parts = dict(loaded) if isinstance(loaded, datasets.DatasetDict) else {"data": loaded}
        if split:
            if split not in parts:
                raise ImportProblem(f"{root}: no split {split!r} (has {', '.join(parts)})")
            parts = {split: parts[split]}
        out = []
        for name, ds in parts.items():
            labels = {
                c: f.names for c, f in ds.features.items() if isinstance(f, datasets.ClassLabel)
            }
            out.append((name, ds.data.table, labels))
        return out
    import pyarrow.parquet as pq

    files = [root] if root.suffix == ".parquet" else sorted(root.glob("**/*.parquet"))
    if not files:
        raise ImportProblem(
            f"{root}: neither a saved Hugging Face dataset (dataset_dict.json or "
            "state.json) nor parquet files"
        )
    groups: dict[str, list[Path]] = {}
    for f in files:
        m = _PARQUET_SPLIT.match(f.name)
        groups.setdefault(m.group(1) if m else f.parent.name, []).append(f)
    if split:
        if split not in groups:
            raise ImportProblem(f"{root}: no split {split!r} (has {', '.join(groups)})")
        groups = {split: groups[split]}
    return [(name, [pq.ParquetFile(f) for f in fs], {}) for name, fs in groups.items()]


def _batches(source: object) -> Iterator[dict[str, list]]:
    if isinstance(source, list):  # parquet files
        for pf in source:
            for batch in pf.iter_batches(batch_size=BATCH):
                yield batch.to_pydict()
    else:
        for batch in source.to_batches(max_chunksize=BATCH):  # type: ignore[attr-defined]
            yield batch.to_pydict()


def import_hf(
    root: Path,
    split: str | None = None,
    audio_column: str = "audio",
    text_column: str | None = None,
    id_column: str | None = None,
    reference_free: bool = False,
) -> Iterator[Item]:
    """Items of a saved HF dataset; every split unless `split` (IDs must differ across them)."""
    root = Path(root)
    for name, source, labels in _splits(root, split):
        for start, batch in _enumerate_batches(source):
            cols = list(batch)
            if audio_column not in cols:
                raise ImportProblem(
                    f"{root} [{name}]: no audio column {audio_column!r} (columns: "
                    f"{', '.join(cols)}); pass --audio-column"
                )
            text_col = text_column or next((c for c in TEXT_COLUMNS if c in cols), None)
            if text_col is None and not reference_free:
                raise ImportProblem(
                    f"{root} [{name}]: no text column ({', '.join(TEXT_COLUMNS)})"
                    "; pass --text-column, or --reference-free"
                )
            if text_col is not None and text_col not in cols:
                raise ImportProblem(f"{root} [{name}]: no column {text_col!r}")
            id_col = id_column or next((c for c in ID_COLUMNS if c in cols), None)
            for i, audio in enumerate(batch[audio_column]):
                row = start + i
                where = f"{root} [{name}] row {row}"
                yield _item(batch, i, audio, root, name, row, where, text_col, id_col, labels)


def _enumerate_batches(source: object) -> Iterator[tuple[int, dict[str, list]]]:
    start = 0
    for batch in _batches(source):
        yield start, batch
        start += len(next(iter(batch.values()), []))


def _item(batch, i, audio, root, split, row, where, text_col, id_col, labels) -> Item:
    if not isinstance(audio, dict):
        raise ImportProblem(
            f"{where}: audio cell is {type(audio).__name__}, not an Audio feature ({{bytes, path}})"
        )
    data, path = audio.get("bytes"), audio.get("path")
    if data:
        load = lambda d=data, w=where: decode_bytes(d, w)  # noqa: E731
        key = f"{split}#{row}"
    elif path:
        full = inside(root, path, where, " (the audio column holds a path, not bytes)")
        load = lambda p=full, w=where: read_audio_file(p, w)  # noqa: E731
        key = str(full)
    else:
        raise ImportProblem(f"{where}: audio cell has neither bytes nor a path")
    raw_id = batch[id_col][i] if id_col else None
    if raw_id is None or raw_id == "":
        raw_id = Path(path).stem if path else f"{split}_{row:06d}"
    text = batch[text_col][i] if text_col else ""
    if text is None:
        text = ""
    extra = {}
    for col, label in _EXTRA.items():
        if col in batch and label not in extra:
            value = batch[col][i]
            if col in labels and isinstance(value, int):
                value = labels[col][value]
            value = "" if value is None else str(value)
            extra[label] = _GENDER.get(value.lower(), value) if label == "GENDER" else value
    return Item(id=str(raw_id), load=load, key=key, text=str(text), extra=extra, where=where)
