"""The model x dataset TER matrix with per-dataset ranks, built from stored results only.

Like Table VI of the SpeechColab Leaderboard paper: one row per model, one column per dataset,
each cell `TER (rank)`; ties share the lower rank; a missing cell is blank and unranked. The
reported cell is `results/<model>/<dataset>/`; a dataset with only a sample result shows the
sample, marked `*` with its size, and unranked; other results stored beside a reported one
(see layout.py) are counted in `others` so the reader knows they exist. Unreadable summaries
are listed in `problems` (file and reason) and the rest of the table is still built.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from asrbench.fsio import atomic_write_json, atomic_write_text
from asrbench.results.layout import SEP
from asrbench.results.summary import Summary, SummaryError, read_summary
from asrbench.table import markdown


@dataclass(frozen=True)
class Cell:
    """One reported result."""

    summary: Summary
    path: Path
    kind: str  # "reported" or "sample"

    def to_dict(self) -> dict[str, Any]:
        m = self.summary.metrics
        sel = self.summary.selection
        return {"ter": m.ter, "mter": m.mter, "unit": m.unit, "name": m.name,
                "coverage": m.coverage, "n_utts": m.n_utts,
                "ci": m.ter_ci.to_dict() if m.ter_ci else None,
                "dataset_hash": self.summary.dataset_hash, "result_key": self.summary.result_key,
                "sample": sel.is_sample, "n_dataset_utts": sel.n_dataset_utts,
                "path": str(self.path), "kind": self.kind}


def collect(results_root: Path) -> tuple[dict[str, dict[str, Cell]], dict[str, dict[str, int]],
                                         list[str]]:
    """({model: {dataset: cell}}, {model: {dataset: results stored beside}}, problems)."""
    cells: dict[str, dict[str, Cell]] = {}
    others: dict[str, dict[str, int]] = {}
    problems: list[str] = []
    samples: dict[tuple[str, str], list[Cell]] = {}
    for path in sorted(Path(results_root).glob("*/*/summary.json")):
        folder = path.parent
        if folder.name.startswith(".") or folder.parent.name == "robustness":
            continue
        try:
            s = read_summary(path)
        except SummaryError as exc:
            problems.append(str(exc))
            continue
        if s.metrics is None:
            continue  # a reference-free dataset: hypotheses only, nothing to rank
        model = s.model or folder.parent.name
        dataset = s.dataset or folder.name.split(SEP)[0]
        if folder.name == dataset:
            cells.setdefault(model, {})[dataset] = Cell(s, folder, "reported")
        elif s.selection.is_sample:
            samples.setdefault((model, dataset), []).append(Cell(s, folder, "sample"))
        else:
            others.setdefault(model, {}).setdefault(dataset, 0)
            others[model][dataset] += 1
    for (model, dataset), found in samples.items():
        row = cells.setdefault(model, {})
        if dataset not in row:  # a sample is shown only where no full result exists
            row[dataset] = max(found, key=lambda c: c.summary.selection.n_utts)
        else:
            others.setdefault(model, {}).setdefault(dataset, 0)
            others[model][dataset] += len(found)
    return cells, others, problems


def _ranks(values: dict[str, float]) -> dict[str, int]:
    ordered = sorted(values.values())
    return {k: 1 + ordered.index(v) for k, v in values.items()}


def build(results_root: Path) -> dict:
    """The leaderboard as plain data: models, datasets, TER and rank per cell, mean rank."""
    table, others, problems = collect(results_root)
    models = sorted(table)
    datasets = sorted({d for row in table.values() for d in row})
    cells: dict[str, dict[str, dict]] = {m: {} for m in models}
    for d in datasets:
        rates = {}
        for m in models:
            c = table[m].get(d)
            if c is None:
                continue
            cells[m][d] = {**c.to_dict(), "rank": None, "others": others.get(m, {}).get(d, 0)}
            if c.summary.metrics.ter is not None and c.kind == "reported":
                rates[m] = c.summary.metrics.ter
        for m, r in _ranks(rates).items():
            cells[m][d]["rank"] = r
    mean_rank = {}
    for m in models:
        ranks = [c["rank"] for c in cells[m].values() if c["rank"] is not None]
        mean_rank[m] = round(sum(ranks) / len(ranks), 3) if ranks else None
    return {"format": "asrbench-leaderboard-v1", "models": models, "datasets": datasets,
            "cells": cells, "mean_rank": mean_rank, "problems": problems}


def _cell_text(c: dict | None) -> str:
    if not c or c["ter"] is None:
        return ""
    text = f"{100 * c['ter']:.2f}"
    if c["sample"]:
        return f"{text}* (sample {c['n_utts']}/{c['n_dataset_utts']})"
    text += f" ({c['rank']})"
    if c.get("others"):
        text += f" +{c['others']}"
    return text


def to_markdown(board: dict) -> str:
    head = ["model", *board["datasets"], "mean rank"]
    rows = []
    for m in board["models"]:
        row = {"model": m, "mean rank": "" if board["mean_rank"][m] is None
               else f"{board['mean_rank'][m]:g}"}
        row.update({d: _cell_text(board["cells"][m].get(d)) for d in board["datasets"]})
        rows.append(row)
    notes = ("TER in % (word error rate, or character error rate for character-unit datasets); "
             "rank per dataset in parentheses, 1 = best. `*` marks a sample (--max-utts), "
             "never ranked; `+N` counts other results stored beside the reported one "
             "(another dataset content or scorer options).")
    text = notes + "\n\n" + markdown(rows, head, fmt=str)
    if board.get("problems"):
        text += "\nNot shown (unreadable):\n" + "".join(f"- {p}\n" for p in board["problems"])
    return text


def to_csv(board: dict) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["model", *(f"{d} TER%" for d in board["datasets"]),
                *(f"{d} rank" for d in board["datasets"]), "mean rank"])
    for m in board["models"]:
        cells = [board["cells"][m].get(d) for d in board["datasets"]]
        w.writerow([m, *("" if not c or c["ter"] is None else
                         f"{100 * c['ter']:.2f}" + ("*" if c["sample"] else "") for c in cells),
                    *("" if not c or c["rank"] is None else c["rank"] for c in cells),
                    board["mean_rank"][m] if board["mean_rank"][m] is not None else ""])
    return buf.getvalue()


def write(board: dict, out_dir: Path) -> dict[str, Path]:
    """Write leaderboard.{csv,json,md} atomically into out_dir."""
    out_dir = Path(out_dir)
    paths = {"csv": out_dir / "leaderboard.csv", "json": out_dir / "leaderboard.json",
             "md": out_dir / "leaderboard.md"}
    atomic_write_text(paths["csv"], to_csv(board))
    atomic_write_json(paths["json"], board)
    atomic_write_text(paths["md"], to_markdown(board))
    return paths


MODEL_COLUMNS = ("model", "type", "parameters", "weights", "image", "TER %", "mTER %", "RTF",
                 "latency p50 s", "latency p90 s", "coverage", "utts", "runner")


def model_rows(models: list, results_root: Path, dataset: str) -> list[dict[str, str]]:
    """One row per model with a reported result on `dataset`: accuracy, speed, sizes.

    Reads the same cells as the leaderboard; nothing is typed by hand, so the table in
    docs/MODELS.md can be regenerated and diffed.
    """
    from asrbench.images import image_size
    from asrbench.modelcard import human

    table, _, _ = collect(results_root)
    rows = []
    for m in models:
        c = table.get(m.id, {}).get(dataset)
        if c is None:
            continue
        met, tim = c.summary.metrics, c.summary.timing or {}
        lat = tim.get("latency_s") or {}

        def pct(x: float | None) -> str:
            return "-" if x is None else f"{100 * x:.2f}"

        def num(x: float | None, fmt: str = "{:.3f}") -> str:
            return "-" if x is None else fmt.format(x)

        rows.append({
            "model": m.id, "type": m.card.type, "parameters": human(m.card.parameters),
            "weights": human(m.card.size_bytes, "B"),
            "image": human(image_size(c.summary.model_identity), "B"),
            "TER %": pct(met.ter) + ("*" if c.kind == "sample" else ""),
            "mTER %": pct(met.mter), "RTF": num(tim.get("rtf")),
            "latency p50 s": num(lat.get("p50"), "{:.2f}"),
            "latency p90 s": num(lat.get("p90"), "{:.2f}"),
            "coverage": num(met.coverage, "{:.2f}"), "utts": str(met.n_utts),
            "runner": str(c.summary.runner or "-"),
        })
    return rows
