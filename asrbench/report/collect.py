"""Read what is stored under a results root: cells, robustness and fairness outputs.

Nothing is rerun. Every file that cannot be used (truncated JSON, a missing run.json, a summary
of an older schema, an unknown format) becomes one problem line naming the file and what to do,
and the rest is still read: the site shows the problems on its front page and builds the rest.

The cells, and which one is shown per model and dataset, come from `asrbench.results.store`,
the one reader `ops/leaderboard` uses too.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from asrbench.results.store import (
    CellReadError,
    StoredCell,
    matches,
    read_json,
    read_utterances,
    scan,
)

FAIRNESS_FORMAT = "asrbench-fairness-v1"
Cell = StoredCell  # the report shows the store's cells as they are
ReportInputError = CellReadError
__all__ = ["Cell", "ReportInputError", "Results", "collect", "read_json", "read_utterances"]


@dataclass
class Results:
    """Everything read, plus the problems met on the way."""

    root: Path
    cells: dict[tuple[str, str], Cell]
    models: list[str]
    datasets: list[str]
    missing: dict[tuple[str, str], str]  # why a cell is absent
    robustness: list[tuple[Path, dict[str, Any]]]
    fairness: list[tuple[Path, dict[str, Any]]]
    problems: list[str]

    def cell(self, model: str, dataset: str) -> Cell | None:
        return self.cells.get((model, dataset))


def collect(
    root: Path, models: list[str] | None = None, datasets: list[str] | None = None
) -> Results:
    """Read every cell (`store.scan`), robustness.json and fairness.json under `root`."""
    root = Path(root)
    found = scan(root, models, datasets)
    problems = list(found.problems)
    for c in found.cells.values():
        if c.run is None and c.run_problem:
            problems.append(c.run_problem)

    def explicit(names: list[str] | None) -> set[str]:  # named exactly, not by a pattern
        return {n for n in names or [] if not any(ch in n for ch in "*?[")}

    model_ids = sorted(set(found.models) | explicit(models))
    dataset_ids = sorted(set(found.datasets) | explicit(datasets))
    missing = {
        (m, d): found.unreadable.get((m, d), "not run")
        for m in model_ids
        for d in dataset_ids
        if (m, d) not in found.cells
    }
    robustness = _read_analyses(
        root / "robustness",
        "robustness.json",
        problems,
        lambda d: _check_robustness(d),
        datasets,
        models,
    )
    fairness = _read_analyses(
        root / "fairness", "fairness.json", problems, lambda d: _check_fairness(d), datasets, models
    )
    return Results(
        root, dict(found.cells), model_ids, dataset_ids, missing, robustness, fairness, problems
    )


def _check_robustness(d: Any) -> str | None:
    if not isinstance(d, dict) or not isinstance(d.get("rows"), list):
        return "not a robustness report (no `rows` list); rerun ops/robustness"
    for i, r in enumerate(d["rows"]):
        if not isinstance(r, dict) or not {"model", "condition", "wer", "werd", "wer_clean"} <= set(
            r
        ):
            return (
                f"row {i} lacks model/condition/wer/wer_clean/werd (an older "
                "ops/robustness?); rerun ops/robustness"
            )
    return None


def _check_fairness(d: Any) -> str | None:
    fmt = d.get("format") if isinstance(d, dict) else None
    if fmt != FAIRNESS_FORMAT:
        return f"format {fmt!r}, expected {FAIRNESS_FORMAT!r}; rerun ops/fairness"
    return None


def _read_analyses(
    top: Path,
    name: str,
    problems: list[str],
    check: Any,
    datasets: list[str] | None,
    models: list[str] | None,
) -> list[tuple[Path, dict[str, Any]]]:
    out = []
    for path in sorted(top.glob(f"**/{name}")):
        if any(part.startswith(".") for part in path.relative_to(top).parts):
            continue
        try:
            data = read_json(path)
        except ReportInputError as exc:
            problems.append(f"{exc}; this analysis is left out of the site")
            continue
        why = check(data)
        if why:
            problems.append(f"{path}: {why}; this analysis is left out of the site")
            continue
        ds = data.get("dataset")
        ds_id = ds.get("id") if isinstance(ds, dict) else ds
        if not matches(str(ds_id), datasets):
            continue
        if models and not any(matches(m, models) for m in _analysis_models(data)):
            continue
        out.append((path, data))
    return out


def _analysis_models(data: dict[str, Any]) -> list[str]:
    if "models" in data and isinstance(data["models"], list):
        return [str(m) for m in data["models"]]
    return sorted({str(r.get("model")) for r in data.get("rows", [])})
