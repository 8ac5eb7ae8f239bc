"""Scorer ablation: TER and mTER after each normalisation step, as each cell stored it.

The ladder (raw, +CASE, +PUNC, +ITJ, +UK-US, +NSW, +DAE) is computed when the benchmark writes
the cell and stored in its `ablation.json` (asrbench/results/derived.py, docs/RESULTS.md);
this module only reads it. A cell stored before that record existed gets a note naming the
command that writes it (`ops/report --backfill`) instead of a re-score here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from asrbench.report.collect import Cell
from asrbench.results.records import (
    ABLATION_FILE,
    BACKFILL,
    AblationRecord,
    RecordError,
    read_record,
)


@dataclass
class CellAblation:
    """One cell's ladder: a row per stage, and which steps changed each utterance."""

    rows: list[dict[str, Any]]  # stage, applied (in this cell's scorer), ter, mter, sub, ...
    matches_stored: bool | None
    note: str | None
    applied: dict[str, list[str]]  # utterance ID -> step names that changed its tokens
    stages: list[str]  # "raw" and every step of the ladder, in order


def stored(cell: Cell) -> tuple[CellAblation | None, str | None]:
    """The cell's stored ablation, or (None, why not: one line saying what to run)."""
    path = cell.folder / ABLATION_FILE
    if not path.is_file():
        return None, (
            f"{path}: missing (the cell was written before asrbench stored its ablation, or its "
            f"dataset is derived); run `{BACKFILL}` to write it from the stored utterances"
        )
    try:
        rec = read_record(path, AblationRecord.from_dict)
    except RecordError as exc:
        return None, str(exc)
    return CellAblation(rec.rows, rec.matches_stored, rec.note, rec.applied, rec.stages), None


def stored_dataset(cells: list[Cell]) -> tuple[dict[str, CellAblation], dict[str, str]]:
    """The stored ablations of one dataset's scored cells by model, and why some are absent."""
    out: dict[str, CellAblation] = {}
    why: dict[str, str] = {}
    for c in cells:
        if c.summary.metrics is None or c.utterances() is None:
            continue
        a, note = stored(c)
        if a is not None:
            out[c.model] = a
        elif note:
            why[c.model] = note
    return out, why


def stages(ablations: list[CellAblation]) -> list[str]:
    """Every stage of these ablations, in ladder order (the first one's, then any others')."""
    out: list[str] = []
    for a in ablations:
        out += [s for s in a.stages if s not in out]
    return out
