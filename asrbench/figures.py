"""Figures that reproduce: doc tables rendered from stored results, never typed by hand.

`collect` reads reported result cells (`results/<model>/<dataset>/summary.json` and the
`run.json` beside it) into a small figure-data file, `docs/figures/<name>.json`: per model the
WER, mTER, errors, words, CI, image tag, the machine (CPU model and x86-64 level, from
asrbench.host via run.json) and the commit and date it ran on. `render` rewrites every marked
block of README.md and docs/*.md,

    <!-- figure:NAME -->
    ...generated, do not edit...
    <!-- /figure -->

from `docs/figures/NAME.json` alone, so a table cannot drift from its data
(tests/test_figures.py checks that every block equals its rendering), and the text under each
table names the machine, the commit and the commands that produce it.

    .venv/bin/python scripts/figures.py collect NAME -d DATASET -m MODEL [-m MODEL ...]
    .venv/bin/python scripts/figures.py render [--check]
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from asrbench.errors import InputError
from asrbench.fsio import atomic_write_text
from asrbench.results.records import RunRecord, read_record
from asrbench.results.summary import read_summary
from asrbench.settings import REPO_ROOT
from asrbench.table import markdown

FORMAT = "asrbench-figure-v1"
FIGURES = REPO_ROOT / "docs" / "figures"
# the files whose marked blocks `render` rewrites (relative to the repository root)
DOCS = ("README.md", "docs/*.md")
BLOCK = re.compile(
    r"(?P<open><!-- figure:(?P<name>[A-Za-z0-9_.-]+) -->\n)"
    r"(?P<body>.*?)(?P<close><!-- /figure -->)",
    re.S,
)
COLUMNS = ("model", "WER %", "95 % CI", "mTER %", "errors / words", "image")
RENDER = "python scripts/figures.py render"


class FigureError(InputError):
    """A figure that cannot be collected or rendered (missing result, unknown figure name)."""


@dataclass(frozen=True)
class Block:
    """One marked block of a document: where it is and what it holds now."""

    path: Path
    name: str
    body: str


def _row(cell: Path) -> dict[str, Any]:
    """One model's figures from a stored result cell (summary.json + run.json)."""
    summary = read_summary(cell / "summary.json")
    run = read_record(cell / "run.json", RunRecord.from_dict)
    m = summary.metrics
    if m is None:
        raise FigureError(f"{cell}: a reference-free result has no error rate to show")
    ci = m.ter_ci
    return {
        "model": summary.model,
        "wer": m.ter,
        "mter": m.mter,
        "errors": m.errors,
        "words": m.n_ref,
        "utterances": m.n_utts,
        "coverage": m.coverage,
        "ci": [ci.low, ci.high] if ci and ci.low is not None else None,
        "image": run.model.image,
        "machine": {
            "cpu_model": run.host.cpu_model,
            "isa_level": run.host.isa_level,
            "cpus": run.host.cpus,
        },
        "commit": run.git.commit,
        "dirty": bool(run.git.dirty),
        "date": run.times.ended[:10],
        "command": run.command,
    }


def collect(
    name: str,
    dataset: str,
    models: Sequence[str],
    results: Path,
    out: Path = FIGURES,
    argv: Sequence[str] | None = None,
) -> Path:
    """Write `out/NAME.json` from the reported cells `results/<model>/<dataset>/`."""
    rows = []
    for model in models:
        cell = results / model / dataset
        if not (cell / "summary.json").is_file():
            raise FigureError(
                f"{cell}: no stored result; run `ops/benchmark -m {model} -d {dataset}` first"
            )
        rows.append(_row(cell))
    hashes = {read_summary(results / m / dataset / "summary.json").dataset_hash for m in models}
    if len(hashes) != 1:
        raise FigureError(f"{name}: the results were computed on different {dataset} content")
    rows.sort(key=lambda r: (r["wer"], r["model"]))
    data = {
        "format": FORMAT,
        "name": name,
        "dataset": dataset,
        "dataset_hash": hashes.pop(),
        "collect": list(argv) if argv else None,
        "rows": rows,
    }
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{name}.json"
    atomic_write_text(path, json.dumps(data, indent=1, ensure_ascii=False) + "\n")
    return path


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.2f}"


def _machine(row: dict[str, Any]) -> str:
    m = row["machine"]
    cpus = f", {m['cpus']} CPUs" if m.get("cpus") else ""
    return f"{m.get('cpu_model') or 'unknown CPU'}, {m.get('isa_level') or 'unknown ISA'}{cpus}"


def _provenance(rows: Iterable[dict[str, Any]]) -> list[str]:
    """One line per distinct (machine, commit, date), naming the models that ran there."""
    groups: dict[tuple[str, str, str], list[str]] = {}
    for r in rows:
        commit = (r["commit"] or "unknown")[:12] + (" (uncommitted changes)" if r["dirty"] else "")
        groups.setdefault((_machine(r), commit, r["date"]), []).append(r["model"])
    lines = []
    for (machine, commit, date), models in groups.items():
        who = "all rows" if len(groups) == 1 else ", ".join(models)
        lines.append(f"- Ran on {machine}; commit {commit}; {date} ({who}).")
    return lines


def _as_typed(argv: Sequence[str]) -> str:
    """A recorded command as the user typed it: `ops/benchmark --as-alias ops/benchmark
    benchmark ARGS` (how the ops/* aliases call the CLI) reads `ops/benchmark ARGS`."""
    args = list(argv)
    if len(args) > 3 and args[1] == "--as-alias":
        args = [args[2], *args[4:]]
    return shlex.join(args)


def _commands(data: dict[str, Any]) -> list[str]:
    """The benchmark command(s) that stored the results, then the ones that make this table."""
    runs = {_as_typed(r["command"]) for r in data["rows"] if r["command"]}
    lines = [f"- Results: `{c}`." for c in sorted(runs)]
    if data.get("collect"):
        lines.append(f"- Table: `{shlex.join(data['collect'])} && {RENDER}`.")
    return lines


def render(data: dict[str, Any]) -> str:
    """The Markdown of one figure, from its data file alone."""
    rows = [
        {
            "model": r["model"],
            "WER %": _pct(r["wer"]),
            "95 % CI": f"{_pct(r['ci'][0])}-{_pct(r['ci'][1])}" if r["ci"] else "-",
            "mTER %": _pct(r["mter"]),
            "errors / words": f"{r['errors']} / {r['words']}",
            "image": f"`{r['image']}`" if r["image"] else "-",
        }
        for r in data["rows"]
    ]
    head = (
        f"`{data['dataset']}` ({data['dataset_hash'][:19]}...), "
        f"generated from `docs/figures/{data['name']}.json`; do not edit by hand."
    )
    lines = [head, "", markdown(rows, COLUMNS).rstrip("\n"), ""]
    lines += _provenance(data["rows"]) + _commands(data)
    return "\n".join(lines) + "\n"


def load(name: str, figures: Path = FIGURES) -> dict[str, Any]:
    path = figures / f"{name}.json"
    if not path.is_file():
        raise FigureError(f"{path}: no such figure; run `scripts/figures.py collect {name} ...`")
    data = json.loads(path.read_text(encoding="utf-8"))
    if data.get("format") != FORMAT:
        raise FigureError(f"{path}: format {data.get('format')!r}, expected {FORMAT!r}")
    return data


def documents(root: Path = REPO_ROOT) -> list[Path]:
    return sorted({p for pattern in DOCS for p in root.glob(pattern) if p.is_file()})


def blocks(paths: Iterable[Path]) -> list[Block]:
    """Every marked block in `paths`, in order."""
    return [
        Block(p, m["name"], m["body"])
        for p in paths
        for m in BLOCK.finditer(p.read_text(encoding="utf-8"))
    ]


def rewrite(path: Path, figures: Path = FIGURES) -> bool:
    """Render every marked block of `path` from its data; True when the file changed."""
    text = path.read_text(encoding="utf-8")
    new = BLOCK.sub(lambda m: m["open"] + render(load(m["name"], figures)) + m["close"], text)
    if new != text:
        atomic_write_text(path, new)
    return new != text


def stale(paths: Iterable[Path], figures: Path = FIGURES) -> list[Block]:
    """The marked blocks that differ from their rendering (docs edited by hand, data changed)."""
    return [b for b in blocks(paths) if b.body != render(load(b.name, figures))]
