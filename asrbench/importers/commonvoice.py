"""Common Voice: `<lang>/<split>.tsv` (client_id, path, sentence, age, gender, accents...) and
`<lang>/clips/*.mp3`, for any language and release."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from pathlib import Path

from asrbench.importers.common import ImportProblem, Item, file_loader, inside, read_text_file

# Releases up to 16 write male/female; 17+ write male_masculine, female_feminine...
_GENDER = {"male": "M", "female": "F"}


def find_tsv(root: Path, language: str, split: str) -> Path:
    """`<root>/**/<language>/<split>.tsv` (the release folder's name varies)."""
    direct = root / f"{split}.tsv"
    if direct.is_file() and (root / "clips").is_dir():
        return direct
    found = sorted(root.glob(f"**/{language}/{split}.tsv"))
    if not found:
        raise ImportProblem(
            f"{root}: no {language}/{split}.tsv (a Common Voice release folder "
            "holds <language>/<split>.tsv and <language>/clips/)"
        )
    return found[0]


def import_commonvoice(root: Path, language: str = "en", split: str = "test") -> Iterator[Item]:
    """Items of one split of a Common Voice language folder; reference text as published."""
    tsv = find_tsv(Path(root), language, split)
    clips = tsv.parent / "clips"
    # Common Voice writes sentences with quotes unescaped: read without CSV quoting.
    reader = csv.DictReader(
        io.StringIO(read_text_file(tsv), newline=""), delimiter="\t", quoting=csv.QUOTE_NONE
    )
    need = {"path", "sentence"}
    if not need <= set(reader.fieldnames or []):
        raise ImportProblem(
            f"{tsv}:1: a Common Voice TSV needs columns {sorted(need)}; got {reader.fieldnames}"
        )
    for lineno, row in enumerate(reader, start=2):
        where = f"{tsv}:{lineno}"
        rel = (row.get("path") or "").strip()
        if not rel:
            raise ImportProblem(f"{where}: empty 'path'")
        audio = inside(clips, rel, where)
        gender = (row.get("gender") or "").split("_")[0].lower()
        extra = {
            "SPEAKER": row.get("client_id") or "",
            "GENDER": _GENDER.get(gender, ""),
            "AGE": row.get("age") or "",
            "ACCENT": row.get("accents") or row.get("accent") or "",
            "LANGUAGE": row.get("locale") or language,
        }
        yield Item(
            id=Path(rel).stem,
            load=file_loader(audio, where),
            key=str(audio),
            text=row.get("sentence") or "",
            extra=extra,
            where=where,
        )
