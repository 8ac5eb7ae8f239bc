"""Read what is stored under a results root: cells, robustness and fairness outputs.

Nothing is rerun. Every file that cannot be used (truncated JSON, a missing run.json, a summary
of an older schema, an unknown format) becomes one problem line naming the file and what to do,
and the rest is still read: the site shows the problems on its front page and builds the rest.

Which cell is shown follows `asrbench.results.leaderboard`: `results/<model>/<dataset>/` is the
reported result; a sample (`<dataset>~sample-<key>`) is shown only where no full result exists,
marked partial and never ranked; other results stored beside a reported one are counted.
"""

from __future__ import annotations

import fnmatch
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from asrbench.results.layout import SEP
from asrbench.results.summary import Summary, SummaryError

RUN_FORMAT = "asrbench-run-v2"
FAIRNESS_FORMAT = "asrbench-fairness-v1"
SKIP_TOP = ("robustness", "fairness")  # analysis outputs, not model folders


class ReportInputError(Exception):
    """A stored file the report cannot use; the message names it."""


@dataclass
class Cell:
    """One stored result of a model on a dataset, as the report shows it."""

    model: str
    dataset: str
    folder: Path
    kind: str  # "reported" or "sample"
    summary: Summary
    raw_summary: dict[str, Any]
    run: dict[str, Any] | None
    others: int = 0
    _utts: list[dict[str, Any]] | None = field(default=None, repr=False)
    utts_problem: str | None = None

    @property
    def key(self) -> tuple[str, str]:
        return (self.model, self.dataset)

    @property
    def dataset_meta(self) -> dict[str, Any]:
        return ((self.run or {}).get("dataset") or {}).get("meta") or {}

    @property
    def derived_from(self) -> dict[str, Any] | None:
        d = self.dataset_meta.get("derived_from")
        return d if isinstance(d, dict) else None

    @property
    def card(self) -> dict[str, Any]:
        return ((self.run or {}).get("model") or {}).get("card") or {}

    def utterances(self) -> list[dict[str, Any]] | None:
        """The cell's utterances.jsonl records (None, with `utts_problem` set, if unusable)."""
        if self._utts is None and self.utts_problem is None:
            try:
                self._utts = read_utterances(self.folder / "utterances.jsonl",
                                             scored=self.summary.metrics is not None)
            except ReportInputError as exc:
                self.utts_problem = str(exc)
        return self._utts

    def cost_usd(self) -> float | None:
        """Estimated API cost: `cost` in summary.json or run.json, else the cell's cost.tsv."""
        for src in (self.raw_summary, self.run or {}):
            c = src.get("cost")
            if isinstance(c, int | float) and not isinstance(c, bool):
                return float(c)
            if isinstance(c, dict):
                for k in ("usd", "total_usd", "estimated_usd"):
                    if isinstance(c.get(k), int | float):
                        return float(c[k])
        tsv = self.folder / "cost.tsv"
        if tsv.is_file():
            total = 0.0
            for line in tsv.read_text(encoding="utf-8", errors="replace").splitlines():
                parts = line.split("\t")
                if len(parts) >= 2:
                    try:
                        total += float(parts[1])
                    except ValueError:
                        continue
            return total
        return None


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


def read_json(path: Path) -> Any:
    """JSON from a file; ReportInputError naming the file if absent, unreadable or truncated."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ReportInputError(f"{path}: missing") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ReportInputError(f"{path}: cannot read ({exc})") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ReportInputError(f"{path}: not valid JSON ({exc.msg} at line {exc.lineno}, "
                               f"column {exc.colno}); the file is truncated or corrupt, rerun "
                               "the command that produced it") from None


def read_utterances(path: Path, scored: bool = True) -> list[dict[str, Any]]:
    """utterances.jsonl records; ReportInputError naming the file and line of a bad one.

    Records of a scored cell carry the alignment (`ops`, counts); a reference-free cell's
    records hold the hypothesis only.
    """
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        raise ReportInputError(f"{path}: missing; per-utterance results not shown") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ReportInputError(f"{path}: cannot read ({exc})") from None
    out = []
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ReportInputError(f"{path}:{n}: not valid JSON ({exc.msg}); the file is "
                                   "truncated or corrupt, rerun the benchmark (hypotheses are "
                                   "cached, so only scoring reruns)") from None
        need = ("id", "ops", "sub", "ins", "del", "n_ref") if scored else ("id",)
        if not isinstance(rec, dict) or any(k not in rec for k in need):
            raise ReportInputError(f"{path}:{n}: not an utterance record (needs "
                                   f"{', '.join(need)}); written by an older asrbench? rerun "
                                   "the benchmark")
        out.append(rec)
    return out


def _matches(name: str, patterns: list[str] | None) -> bool:
    return not patterns or any(fnmatch.fnmatchcase(name, p) for p in patterns)


def _read_cell(folder: Path, problems: list[str]) -> tuple[Summary, dict, dict | None]:
    path = folder / "summary.json"
    try:
        raw = read_json(path)
    except ReportInputError as exc:
        raise SummaryError(str(exc)) from None
    summary = Summary.from_dict(raw, str(path))
    run = None
    try:
        run = read_json(folder / "run.json")
        if not isinstance(run, dict) or run.get("format") != RUN_FORMAT:
            fmt = run.get("format") if isinstance(run, dict) else None
            problems.append(f"{folder / 'run.json'}: format {fmt!r}, expected {RUN_FORMAT!r} "
                            "(written by another asrbench version); provenance not shown, "
                            "rerun the benchmark to record it")
            run = None
    except ReportInputError as exc:
        problems.append(f"{exc}; the cell is shown without provenance (dataset folder, model "
                        "card, command); rerun the benchmark to record it")
    return summary, raw, run


def collect(root: Path, models: list[str] | None = None,
            datasets: list[str] | None = None) -> Results:
    """Read every cell, robustness.json and fairness.json under `root` (filters: fnmatch)."""
    root = Path(root)
    problems: list[str] = []
    cells: dict[tuple[str, str], Cell] = {}
    samples: dict[tuple[str, str], list[Cell]] = {}
    others: dict[tuple[str, str], int] = {}
    unreadable: dict[tuple[str, str], str] = {}
    if not root.is_dir():
        problems.append(f"{root}: no such results folder")
    for folder in sorted(p for p in root.glob("*/*") if p.is_dir()):
        model_dir, name = folder.parent.name, folder.name
        if model_dir in SKIP_TOP or model_dir.startswith(".") or name.startswith("."):
            continue
        base = name.split(SEP)[0]
        if not (_matches(model_dir, models) and _matches(base, datasets)):
            continue
        if not (folder / "summary.json").exists():
            if any(folder.iterdir()):
                problems.append(f"{folder}: no summary.json (an interrupted or failed write?); "
                                "rerun the benchmark for this cell")
                unreadable.setdefault((model_dir, base), "failed: no summary.json")
            continue
        try:
            summary, raw, run = _read_cell(folder, problems)
        except SummaryError as exc:
            problems.append(str(exc))
            if name == base:
                unreadable[(model_dir, base)] = "unreadable summary.json (see problems)"
            continue
        model = summary.model or model_dir
        dataset = summary.dataset or base
        cell = Cell(model, dataset, folder, "reported", summary, raw, run)
        if name == dataset:
            cells[(model, dataset)] = cell
        elif summary.selection.is_sample:
            cell.kind = "sample"
            samples.setdefault((model, dataset), []).append(cell)
        else:
            others[(model, dataset)] = others.get((model, dataset), 0) + 1
    for key, found in sorted(samples.items()):
        if key not in cells:
            cells[key] = max(found, key=lambda c: (c.summary.selection.n_utts, str(c.folder)))
        else:
            others[key] = others.get(key, 0) + len(found)
    for key, n in others.items():
        if key in cells:
            cells[key].others = n
    model_ids = sorted({m for m, _ in cells} | {m for m, _ in unreadable}
                       | {m for m in models or [] if not any(c in m for c in "*?[")})
    dataset_ids = sorted({d for _, d in cells} | {d for _, d in unreadable}
                         | {d for d in datasets or [] if not any(c in d for c in "*?[")})
    missing = {}
    for m in model_ids:
        for d in dataset_ids:
            if (m, d) not in cells:
                missing[(m, d)] = unreadable.get((m, d), "not run")
    robustness = _read_analyses(root / "robustness", "robustness.json", problems,
                                lambda d: _check_robustness(d), datasets, models)
    fairness = _read_analyses(root / "fairness", "fairness.json", problems,
                              lambda d: _check_fairness(d), datasets, models)
    return Results(root, cells, model_ids, dataset_ids, missing, robustness, fairness, problems)


def _check_robustness(d: Any) -> str | None:
    if not isinstance(d, dict) or not isinstance(d.get("rows"), list):
        return "not a robustness report (no `rows` list); rerun ops/robustness"
    for i, r in enumerate(d["rows"]):
        if not isinstance(r, dict) or not {"model", "condition", "wer", "werd",
                                           "wer_clean"} <= set(r):
            return (f"row {i} lacks model/condition/wer/wer_clean/werd (an older "
                    "ops/robustness?); rerun ops/robustness")
    return None


def _check_fairness(d: Any) -> str | None:
    fmt = d.get("format") if isinstance(d, dict) else None
    if fmt != FAIRNESS_FORMAT:
        return f"format {fmt!r}, expected {FAIRNESS_FORMAT!r}; rerun ops/fairness"
    return None


def _read_analyses(top: Path, name: str, problems: list[str], check: Any,
                   datasets: list[str] | None, models: list[str] | None
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
        if not _matches(str(ds_id), datasets):
            continue
        if models and not any(_matches(m, models) for m in _analysis_models(data)):
            continue
        out.append((path, data))
    return out


def _analysis_models(data: dict[str, Any]) -> list[str]:
    if "models" in data and isinstance(data["models"], list):
        return [str(m) for m in data["models"]]
    return sorted({str(r.get("model")) for r in data.get("rows", [])})
