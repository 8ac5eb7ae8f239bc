"""Read what is stored under a results root: cells, robustness, fairness and streaming outputs.

Nothing is rerun. Every file that cannot be used (truncated JSON, a missing run.json, a summary
of an older schema, an unknown format) becomes one problem line naming the file and what to do,
and the rest is still read: the site shows the problems on its front page and builds the rest.

The cells, and which one is shown per model and dataset, come from `asrbench.results.store`,
the one reader `ops/leaderboard` uses too.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from asrbench.results.leaderboard import latency, stream_cells
from asrbench.results.records import (
    FairnessRecord,
    RobustnessRecord,
    StreamRecord,
)
from asrbench.results.store import (
    STREAM_TOP,
    CellReadError,
    StoredCell,
    matches,
    read_analyses,
    read_json,
    read_utterances,
    scan,
)

LEFT_OUT = "this analysis is left out of the site"

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
    robustness: list[tuple[Path, RobustnessRecord]]
    fairness: list[tuple[Path, FairnessRecord]]
    problems: list[str]
    streaming: list[tuple[Path, StreamRecord]] = field(default_factory=list)
    # {model: {dataset: the shown streaming cell's latencies}}, as ops/leaderboard shows them
    latency: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)

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
    robustness = [
        (path, rec)
        for path, rec in read_analyses(
            root / "robustness", "robustness.json", RobustnessRecord.from_dict, problems, LEFT_OUT
        )
        if matches(rec.dataset, datasets) and _any_model(rec.models, models)
    ]
    fairness = [
        (path, rec)
        for path, rec in read_analyses(
            root / "fairness", "fairness.json", FairnessRecord.from_dict, problems, LEFT_OUT
        )
        if matches(str(rec.dataset.get("id")), datasets) and _any_model(rec.models, models)
    ]
    streaming = [
        (path, rec)
        for path, rec in read_analyses(
            root / STREAM_TOP, "stream.json", StreamRecord.from_dict, problems, LEFT_OUT
        )
        if matches(rec.dataset, datasets) and _any_model([rec.model], models)
    ]
    return Results(
        root,
        dict(found.cells),
        model_ids,
        dataset_ids,
        missing,
        robustness,
        fairness,
        problems,
        streaming,
        # an unreadable summary.json of a stream cell is noted by the streaming page
        latency(stream_cells(streaming, [])),
    )


def _any_model(found: list[str], models: list[str] | None) -> bool:
    return not models or any(matches(m, models) for m in found)
