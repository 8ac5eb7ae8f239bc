"""The model x dataset WER matrix with per-dataset ranks, built from stored results only.

Like Table VI of the SpeechColab Leaderboard paper: one row per model, one column per
dataset, each cell `WER (rank)`; ties share the lower rank; a missing cell is blank and
unranked. Written as CSV, JSON and Markdown beside the results.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

from asrbench.fsio import atomic_write_json, atomic_write_text


def collect(results_root: Path) -> dict[str, dict[str, dict]]:
    """{model: {dataset: summary}} from every `<results>/<model>/<dataset>/summary.json`."""
    table: dict[str, dict[str, dict]] = {}
    for path in sorted(Path(results_root).glob("*/*/summary.json")):
        try:
            s = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError):
            continue  # a cell being written right now; atomic writes make this rare
        if not isinstance(s, dict) or "metrics" not in s:
            continue
        table.setdefault(s.get("model", path.parent.parent.name), {})[
            s.get("dataset", path.parent.name)] = s
    return table


def _ranks(values: dict[str, float]) -> dict[str, int]:
    ordered = sorted(values.values())
    return {k: 1 + ordered.index(v) for k, v in values.items()}


def build(results_root: Path) -> dict:
    """The leaderboard as plain data: models, datasets, WER and rank per cell, mean rank."""
    table = collect(results_root)
    models = sorted(table)
    datasets = sorted({d for row in table.values() for d in row})
    cells: dict[str, dict[str, dict]] = {m: {} for m in models}
    for d in datasets:
        wers = {}
        for m in models:
            s = table[m].get(d)
            if s is None:
                continue
            met = s["metrics"]
            wer = met.get("wer", met.get("ter"))
            cells[m][d] = {"ter": wer, "mter": met.get("mter"), "unit": met.get("unit", "word"),
                           "coverage": met.get("coverage"), "n_utts": met.get("n_utts"),
                           "ci": (met.get("ci") or {}).get("ter"),
                           "dataset_hash": s.get("dataset_hash"), "rank": None}
            if wer is not None:
                wers[m] = wer
        for m, r in _ranks(wers).items():
            cells[m][d]["rank"] = r
    mean_rank = {}
    for m in models:
        ranks = [c["rank"] for c in cells[m].values() if c["rank"] is not None]
        mean_rank[m] = round(sum(ranks) / len(ranks), 3) if ranks else None
    return {"models": models, "datasets": datasets, "cells": cells, "mean_rank": mean_rank}


def _cell_text(c: dict | None) -> str:
    if not c or c["ter"] is None:
        return ""
    return f"{100 * c['ter']:.2f} ({c['rank']})"


def to_markdown(board: dict) -> str:
    head = ["model", *board["datasets"], "mean rank"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for m in board["models"]:
        row = [m, *(_cell_text(board["cells"][m].get(d)) for d in board["datasets"]),
               "" if board["mean_rank"][m] is None else f"{board['mean_rank'][m]:g}"]
        lines.append("| " + " | ".join(row) + " |")
    return ("TER in % (word error rate, or character error rate for character-unit datasets); "
            "rank per dataset in parentheses, 1 = best.\n\n" + "\n".join(lines) + "\n")


def to_csv(board: dict) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["model", *(f"{d} TER%" for d in board["datasets"]),
                *(f"{d} rank" for d in board["datasets"]), "mean rank"])
    for m in board["models"]:
        cells = [board["cells"][m].get(d) for d in board["datasets"]]
        w.writerow([m, *("" if not c or c["ter"] is None else f"{100 * c['ter']:.2f}"
                         for c in cells),
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
