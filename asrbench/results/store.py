"""The one reader of stored result cells, beside their writer (`layout.py`).

Every consumer (the leaderboard, the HTML report, fairness, the campaigns) asks this module for
cells; the rules of which folder is which are written once, here:

    results/<model>/<dataset>/                 reported: the full result the table shows
    results/<model>/<dataset>~sample-<key>/    sample: shown only where no reported cell exists;
                                               of several, the largest selection (then the folder
                                               name) is shown, the rest are counted in `others`
    results/<model>/<dataset>~<key>/           variant: another dataset content or scorer options;
                                               counted in `others`, never shown or ranked
    results/robustness/, results/fairness/,    analyses, not model folders (skipped)
    results/streaming/, results/audit/
    .<anything>                                staging and displaced folders (skipped)

A folder that cannot be used (no summary.json, truncated JSON, an older schema) becomes one
problem line naming the file and what to do; the rest is still read.
"""

from __future__ import annotations

import fnmatch
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from asrbench.results import records
from asrbench.results.layout import SEP
from asrbench.results.records import RecordError, RunRecord
from asrbench.results.summary import Summary

# analysis and streaming outputs under a results root, not models
STREAM_TOP = "streaming"  # stream cells: <root>/streaming/<model>/<cell>/ (ops/stream)
AUDIT_TOP = "audit"  # reference audits: <root>/audit/<dataset>/audit.json (ops/audit)
ANALYSIS_TOPS = ("robustness", "fairness", STREAM_TOP, AUDIT_TOP)


class CellReadError(RecordError):
    """A stored file that cannot be used; the message names it and says what to do."""


def read_json(path: Path) -> Any:
    """JSON from a file; CellReadError naming the file if absent, unreadable or truncated."""
    try:
        return records.read_json(path)
    except RecordError as exc:
        raise CellReadError(str(exc)) from None


def read_utterances(path: Path, scored: bool = True) -> list[dict[str, Any]]:
    """utterances.jsonl records; CellReadError naming the file and line of a bad one.

    Records of a scored cell carry the alignment (`ops`, counts); a reference-free cell's
    records hold the hypothesis only.
    """
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        raise CellReadError(f"{path}: missing; per-utterance results not shown") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise CellReadError(f"{path}: cannot read ({exc})") from None
    out = []
    need = ("id", "ops", "sub", "ins", "del", "n_ref") if scored else ("id",)
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except json.JSONDecodeError as exc:
            raise CellReadError(
                f"{path}:{n}: not valid JSON ({exc.msg}); the file is "
                "truncated or corrupt, rerun the benchmark (hypotheses are "
                "cached, so only scoring reruns)"
            ) from None
        if not isinstance(rec, dict) or any(k not in rec for k in need):
            raise CellReadError(
                f"{path}:{n}: not an utterance record (needs "
                f"{', '.join(need)}); written by an older asrbench? rerun "
                "the benchmark"
            )
        out.append(rec)
    return out


@dataclass
class StoredCell:
    """One stored result of a model on a dataset (a folder with a readable summary.json)."""

    model: str
    dataset: str
    folder: Path
    kind: str  # "reported", "sample" or "variant"
    summary: Summary
    others: int = 0  # other results of the same model and dataset stored beside this one
    utts_problem: str | None = None
    run_problem: str | None = None
    _utts: list[dict[str, Any]] | None = field(default=None, repr=False)
    _run: RunRecord | None = field(default=None, repr=False)
    _run_read: bool = field(default=False, repr=False)

    @property
    def key(self) -> tuple[str, str]:
        return (self.model, self.dataset)

    @property
    def is_sample(self) -> bool:
        return self.summary.selection.is_sample

    @property
    def comparable_on(self) -> tuple[str | None, str]:
        """Cells with the same value were scored on the same utterances of the same content."""
        return (self.summary.dataset_hash, self.summary.selection.ids_sha256)

    @property
    def run(self) -> RunRecord | None:
        """run.json (provenance), or None with `run_problem` saying why."""
        if not self._run_read:
            self._run_read = True
            path = self.folder / "run.json"
            shown = "the cell is shown without provenance (dataset folder, model card, command)"
            try:
                data = records.read_json(path)
            except RecordError as exc:
                self.run_problem = f"{exc}; {shown}; rerun the benchmark to record it"
                return None
            try:
                self._run = RunRecord.from_dict(data, str(path))
            except RecordError as exc:  # another format, malformed: says what to do
                self.run_problem = f"{exc}; {shown}"
        return self._run

    @property
    def dataset_meta(self) -> dict[str, Any]:
        return self.run.dataset_meta if self.run else {}

    @property
    def derived_from(self) -> dict[str, Any] | None:
        d = self.dataset_meta.get("derived_from")
        return d if isinstance(d, dict) else None

    @property
    def card(self) -> dict[str, Any]:
        return self.run.card if self.run else {}

    def utterances(self) -> list[dict[str, Any]] | None:
        """The cell's utterances.jsonl records (None, with `utts_problem` set, if unusable)."""
        if self._utts is None and self.utts_problem is None:
            try:
                self._utts = read_utterances(
                    self.folder / "utterances.jsonl", scored=self.summary.metrics is not None
                )
            except CellReadError as exc:
                self.utts_problem = str(exc)
        return self._utts

    def records(self) -> dict[str, dict[str, Any]]:
        """utterances.jsonl by utterance ID; CellReadError naming the file if unusable."""
        utts = self.utterances()
        if utts is None:
            raise CellReadError(
                f"result cell {self.folder} cannot be read ({self.utts_problem})"
                f"; rerun ops/benchmark -m {self.model} on it (hypotheses are "
                "cached)"
            )
        return {u["id"]: u for u in utts}

    def cost_usd(self) -> float | None:
        """Estimated API cost: `cost` in summary.json, else the cell's cost.tsv."""
        c: Any = self.summary.cost
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


def read_cell(folder: Path, model: str | None = None) -> StoredCell:
    """One cell folder, whatever its kind; CellReadError naming the file if unusable."""
    folder = Path(folder)
    path = folder / "summary.json"
    try:
        summary = records.read_record(path, Summary.from_dict)
    except RecordError as exc:
        who = f" -m {model}" if model else ""
        raise CellReadError(
            f"{exc}; rerun ops/benchmark{who} on it (hypotheses are cached, so only scoring reruns)"
        ) from None
    name = folder.name
    base = name.split(SEP)[0]
    dataset = summary.dataset or base
    kind = "reported" if name == dataset else "sample" if summary.selection.is_sample else "variant"
    return StoredCell(summary.model or folder.parent.name, dataset, folder, kind, summary)


@dataclass
class Scan:
    """What a results root holds: the cell shown per (model, dataset), and what was not used."""

    root: Path
    cells: dict[tuple[str, str], StoredCell]  # the shown cell: reported, else the best sample
    hidden: list[StoredCell]  # variants, and samples where a reported cell (or bigger sample) is
    unreadable: dict[tuple[str, str], str]  # (model, dataset) -> why no cell could be shown
    problems: list[str]

    @property
    def models(self) -> list[str]:
        return sorted({m for m, _ in self.cells} | {m for m, _ in self.unreadable})

    @property
    def datasets(self) -> list[str]:
        return sorted({d for _, d in self.cells} | {d for _, d in self.unreadable})


def matches(name: str, patterns: list[str] | None) -> bool:
    """True when no patterns are given or `name` matches one of them (fnmatch, case-sensitive):
    the filter of `scan` and of the report's analyses."""
    return not patterns or any(fnmatch.fnmatchcase(name, p) for p in patterns)


def scan(root: Path, models: list[str] | None = None, datasets: list[str] | None = None) -> Scan:
    """Read every cell folder under `root` (filters: fnmatch patterns on model and dataset)."""
    root = Path(root)
    problems: list[str] = []
    shown: dict[tuple[str, str], StoredCell] = {}
    hidden: list[StoredCell] = []
    samples: dict[tuple[str, str], list[StoredCell]] = {}
    unreadable: dict[tuple[str, str], str] = {}
    if not root.is_dir():
        problems.append(f"{root}: no such results folder")
        return Scan(root, shown, hidden, unreadable, problems)
    for folder in sorted(p for p in root.glob("*/*") if p.is_dir()):
        model_dir, name = folder.parent.name, folder.name
        if model_dir in ANALYSIS_TOPS or model_dir.startswith(".") or name.startswith("."):
            continue
        base = name.split(SEP)[0]
        if not (matches(model_dir, models) and matches(base, datasets)):
            continue
        if not (folder / "summary.json").exists():
            if any(folder.iterdir()):
                problems.append(
                    f"{folder}: no summary.json (an interrupted or failed write?); "
                    "rerun the benchmark for this cell"
                )
                if name == base:
                    unreadable.setdefault((model_dir, base), "failed: no summary.json")
            continue
        try:
            cell = read_cell(folder)
        except CellReadError as exc:
            problems.append(str(exc))
            if name == base:
                unreadable[(model_dir, base)] = "unreadable summary.json (see problems)"
            continue
        if cell.kind == "reported":
            shown[cell.key] = cell
        elif cell.kind == "sample":
            samples.setdefault(cell.key, []).append(cell)
        else:
            hidden.append(cell)
    for key, found in sorted(samples.items()):
        found.sort(key=lambda c: (-c.summary.selection.n_utts, str(c.folder)))
        if key not in shown:
            shown[key] = found[0]
            hidden.extend(found[1:])
        else:
            hidden.extend(found)
    for c in hidden:
        if c.key in shown:
            shown[c.key].others += 1
    for key in list(unreadable):
        if key in shown:
            del unreadable[key]
    return Scan(root, shown, hidden, unreadable, problems)


R = TypeVar("R")


def read_analyses(
    top: Path,
    name: str,
    from_dict: Callable[[Any, str], R],
    problems: list[str],
    left_out: str = "this analysis is left out",
) -> list[tuple[Path, R]]:
    """Every `name` record (robustness.json, fairness.json, stream.json) under `top`, staging
    and displaced folders skipped; each unusable one is a problem line naming the file."""
    out = []
    for path in sorted(Path(top).glob(f"**/{name}")):
        if any(part.startswith(".") for part in path.relative_to(top).parts):
            continue
        try:
            out.append((path, records.read_record(path, from_dict)))
        except RecordError as exc:
            problems.append(f"{exc}; {left_out}")
    return out
