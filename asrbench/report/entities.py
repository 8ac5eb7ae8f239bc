"""Entities, numbers and formatting in the report, read from summary.json as stored.

A cell of a dataset with NLP references (dataset.yaml `nlp:`) stores `entities` (per entity
class: errors over its reference words and the share of entities recognised whole, with
intervals over recordings; number-value errors told apart from format differences),
`formatting` (punctuation per mark, capitalisation, the formatted WER) and `worst_entities`
(its misrecognised entity instances, worst first): asrbench/entity_scoring.py, the code
ops/score runs. The cell page shows them beside TER, the worst entities with the recording's
audio (from the entity's first timed token where the NLP file has times); the leaderboard
shows, per dataset, every model's rate for each entity class in a table sortable by any class.
Nothing is scored here.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from asrbench.report.collect import Cell


def _classes(entities: dict[str, Any] | None) -> list[dict[str, Any]]:
    """The classes, worst first (highest error rate, then name)."""
    rows = [{"name": k, **v} for k, v in ((entities or {}).get("classes") or {}).items()]
    return sorted(rows, key=lambda r: (-(r["er"] if r["er"] is not None else -1.0), r["name"]))


def _marks(formatting: dict[str, Any] | None) -> list[dict[str, Any]]:
    """Punctuation per mark, the most frequent in the reference first."""
    marks = (formatting or {}).get("punctuation") or {}
    rows = [{"mark": k, **v} for k, v in marks.items()]
    return sorted(rows, key=lambda r: (-(r["hits"] + r["misses"]), r["mark"]))


def cell_view(cell: Cell, audio: dict[str, str]) -> dict[str, Any] | None:
    """What the cell page's entity section shows, or None where the cell stores none of it."""
    s = cell.summary
    if s.entities is None and s.formatting is None:
        return None
    worst = s.worst_entities or {}
    return {
        "ter": s.metrics.ter if s.metrics else None,
        "ter_ci": s.metrics.ter_ci if s.metrics else None,
        "classes": _classes(s.entities),
        "numbers": (s.entities or {}).get("numbers"),
        "keywords": (s.entities or {}).get("keywords"),
        "warnings": (s.entities or {}).get("warnings") or [],
        "formatting": s.formatting,
        "marks": _marks(s.formatting),
        "worst": [{**x, "a": audio.get(x["id"])} for x in worst.get("instances") or []],
        "n_misrecognised": worst.get("n_misrecognised"),
        "n_entities": worst.get("n_entities"),
    }


def board(cells: Iterable[Cell]) -> dict[str, Any] | None:
    """One dataset's entity table for the leaderboard: the classes any of its cells has, and
    per model its TER, each class's rate and whole share (with intervals), the number-value
    error rate, punctuation F1 and the capitalisation error rate; None without entities."""
    have = [c for c in cells if c.summary.entities and c.summary.entities.get("classes")]
    if not have:
        return None
    names = sorted({k for c in have for k in c.summary.entities["classes"]})  # type: ignore[index]
    rows = []
    for c in sorted(have, key=lambda c: c.model):
        e, f = c.summary.entities or {}, c.summary.formatting or {}
        m = c.summary.metrics
        rows.append(
            {
                "model": c.model,
                "ter": m.ter if m else None,
                "ter_ci": m.ter_ci if m else None,
                "classes": e.get("classes") or {},
                "value_error_rate": (e.get("numbers") or {}).get("value_error_rate"),
                "f1": (f.get("punctuation_all") or {}).get("f1"),
                "case": f.get("case_error_rate"),
            }
        )
    first = names[0]

    def key(r: dict[str, Any]) -> tuple:
        er = (r["classes"].get(first) or {}).get("er")
        return (er is None, er or 0.0, r["model"])

    return {"classes": names, "rows": sorted(rows, key=key)}
