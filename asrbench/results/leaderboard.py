"""The model x dataset TER matrix with per-dataset ranks, built from stored results only.

Like Table VI of the SpeechColab Leaderboard paper: one row per model, one column per dataset,
each cell `TER [95 % CI] (rank)`; a missing cell is blank. Which cell is shown is `store.scan`'s
rule, which cells are ranked, the significance ranges and the mean rank are `ranking.py`'s: the
HTML report uses the same, so both give the same ranks. The Markdown puts the tables first
(accuracy, long-form sessions, latency, non-speech: one table each), rows by mean rank, and
the notes after them. Other results stored beside the shown one are counted in `others` so the
reader knows they exist. Unreadable summaries are listed in `problems` (file and reason) and
the rest of the table is still built.

Beside the TER, the latency of each model's stored streaming cell on the dataset
(`results/streaming/`, written by ops/stream): end of speech to final and first partial, the
mean over utterances with its 95 % CI as stream.json pools them; "—" where the model has
none. Which cell, when several exist, is `LATENCY_RULE` (`latency`).
"""

from __future__ import annotations

import csv
import dataclasses
import html
import io
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from asrbench.fsio import atomic_write_json, atomic_write_text
from asrbench.results import audit
from asrbench.results.derived import is_longform as longform_meta
from asrbench.results.ranking import DEFAULT_LEVEL, DEFAULT_REPS, mean_ranks, rank_dataset
from asrbench.results.records import RecordError, StreamRecord
from asrbench.results.store import STREAM_TOP, StoredCell, read_analyses, read_cell, scan
from asrbench.results.summary import session_figure_text, session_figures, session_order
from asrbench.table import markdown

# v3 adds `latency` and `latency_rule` (the streaming cells' latencies beside the TER); v4 the
# significance ranges (`group`, `shared_rank` per cell, `significance`), and `mean_rank` is the
# mean shared rank (ranking.py): models the paired bootstrap cannot tell apart tie; v5 the
# latency guard per latency cell (`attributable`, `guard_reasons`: streaming/guard.py) and the
# reference audit (`audit` per cell and per dataset, `exclude_suspects`: ops/audit); v6 the
# session metrics of a long-form cell with their intervals over sessions (`sessions` per cell)
FORMAT = "asrbench-leaderboard-v6"
DEFAULT_CHUNK_MS = 100  # ops/stream's default --chunk-ms
LATENCY_KEYS = ("eos_final_s", "first_partial_s")  # stream.json `pooled` keys, as stored
LATENCY_RULE = (
    "of a model's streaming cells on a dataset, the one fed in real time (speed 1) with the "
    f"default {DEFAULT_CHUNK_MS}-ms chunks is preferred, then a full run over a sample, then "
    "the most utterances, then the newest stream.json (then the folder name); a cell fed "
    "otherwise is shown only where none is, marked with its feed"
)
NO_LATENCY = "\u2014"  # a model with no streaming cell on the dataset
NOT_MODELS = "!"  # the latency guard fired: the figure is not the model's alone


def _cell_dict(c: StoredCell) -> dict[str, Any]:
    m = c.summary.metrics
    assert m is not None, c.folder  # collect() keeps only cells with an error rate
    sel = c.summary.selection
    return {
        "ter": m.ter,
        "mter": m.mter,
        "unit": m.unit,
        "name": m.name,
        "coverage": m.coverage,
        "n_utts": m.n_utts,
        "n_missing": m.n_missing,
        "n_failed": c.summary.n_failed,
        "ci": m.ter_ci.to_dict() if m.ter_ci else None,
        "dataset_hash": c.summary.dataset_hash,
        "result_key": c.summary.result_key,
        "sample": sel.is_sample,
        "n_dataset_utts": sel.n_dataset_utts,
        "path": str(c.folder),
        "kind": c.kind,
        "rank": None,
        "group": None,
        "shared_rank": None,
        "others": c.others,
        "not_ranked": None,
        "language": c.summary.scorer.get("lang"),
        "forced_language": c.summary.forced_language,
        "longform": is_longform(c),
        "segmentation": segmentation(c),
        "sessions": session_figures(c.summary.session_metrics),
        "audit": None,
    }


def _audit_cell(c: StoredCell, found: dict[str, Any] | None) -> dict[str, Any] | None:
    """The dataset's audit as this cell sees it: how many suspects, the cell's TER without them
    (its summary.json block; null where ops/audit did not write one), whether it is current."""
    if not found:
        return None
    without = (c.summary.audit or {}).get("without_suspects") or {}
    return {
        "n_suspects": found["n_suspects"],
        "ter_without": without.get("ter"),
        "current": found["current"],
    }


def _audits(
    root: Path, cells: dict[tuple[str, str], StoredCell], problems: list[str]
) -> dict[str, dict[str, Any]]:
    """Per dataset with a stored audit (`<root>/audit/<dataset>/audit.json`, which a benchmark
    rerun leaves in place): its suspects, and whether it was run over the cells shown now."""
    out: dict[str, dict[str, Any]] = {}
    for d in sorted({d for _, d in cells}):
        try:
            record = audit.read_audit(root, d)
        except RecordError as exc:
            problems.append(f"{exc}; the audit of {d} is left out")
            continue
        if record is None:
            continue
        mine = {m: c for (m, dd), c in cells.items() if dd == d}
        out[d] = {
            "suspects": record.suspect_ids,
            "n_suspects": len(record.suspects),
            "thresholds": record.thresholds,
            "voters": [v["name"] for v in record.voters],
            "current": audit.is_current(record, mine),
        }
    return out


def _without_suspects(
    cells: dict[tuple[str, str], StoredCell], audits: dict[str, dict[str, Any]]
) -> None:
    """--exclude-suspects: every cell of an audited dataset becomes a view without the
    dataset's suspects (the same utterances left out of each, so they stay comparable; metrics
    and CIs recomputed from its per-utterance records, ranks tested on the rest)."""
    for key, c in cells.items():
        ids = set((audits.get(c.dataset) or {}).get("suspects") or [])
        if not ids or c.summary.metrics is None or c.utterances() is None:
            continue
        kept = [u for u in c.utterances() or [] if u["id"] not in ids]
        summary = dataclasses.replace(c.summary, metrics=audit.metrics_without(c, ids))
        cells[key] = dataclasses.replace(c, summary=summary, _utts=kept)


def is_longform(c: StoredCell) -> bool:
    """A cell of a long-form dataset (`kind: longform`): its TER is session-level."""
    return longform_meta(c.dataset_meta)


def segmentation(c: StoredCell) -> dict[str, Any] | None:
    """How a long recording was cut, from run.json's `options.segmentation` (docs/RESULTS.md):
    mode, method, merge and the detector (`record.method`); None when nothing was cut (the
    model's own long-form decoding, or a short-utterance cell)."""
    seg = c.run.options.segmentation if c.run else None
    if not isinstance(seg, dict):
        return None
    record = seg.get("record")
    if not isinstance(record, dict):
        record = {}
    return {
        "mode": seg.get("mode"),
        "method": seg.get("method"),
        "detector": record.get("method"),
        "merge": seg.get("merge"),
        "cut": len(seg.get("cut") or {}),
        "whole": len(seg.get("whole") or []),
    }


def segmentation_text(seg: dict[str, Any] | None) -> str:
    """`vad/silero`, `windows` or `whole` (the model's own decoding): short, for tables."""
    if not seg:
        return "whole"
    detector = seg.get("detector")
    method = str(seg.get("method") or "?")
    return method + (f"/{detector}" if detector and detector != method else "")


HALLUCINATION_KEYS = (
    "clips",
    "clips_with_output",
    "seconds",
    "words",
    "words_per_min",
    "words_per_min_ci",
    "share_with_output",
    "share_ci",
    "worst_id",
    "worst_text",
    "worst_words",
)


def hallucination(cells: Iterable[StoredCell]) -> dict[str, dict[str, dict[str, Any]]]:
    """{model: {dataset: figures}}: summary.json's `hallucination.overall` of each shown cell
    that has one (reference-free non-speech cells), with summary.json's key names."""
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for c in sorted(cells, key=lambda c: c.key):
        fig = (c.summary.hallucination or {}).get("overall")
        if isinstance(fig, dict):
            out.setdefault(c.model, {})[c.dataset] = {k: fig.get(k) for k in HALLUCINATION_KEYS}
    return out


def collect(results_root: Path) -> tuple[dict[str, dict[str, StoredCell]], list[str]]:
    """({model: {dataset: shown cell with an error rate}}, problems), read by `store.scan`."""
    found = scan(results_root)
    return _scored(found.cells.values()), found.problems


def _scored(cells: Iterable[StoredCell]) -> dict[str, dict[str, StoredCell]]:
    table: dict[str, dict[str, StoredCell]] = {}
    for c in sorted(cells, key=lambda c: c.key):
        if c.summary.metrics is not None:  # a reference-free cell has nothing to rank
            table.setdefault(c.model, {})[c.dataset] = c
    return table


@dataclass(frozen=True)
class StreamCell:
    """One stored streaming cell: its stream.json and its summary.json (the finals scored),
    the latter read by the store's one cell reader."""

    record: StreamRecord
    cell: StoredCell
    mtime: float  # stream.json's modification time: "the newest" of the rule

    @property
    def key(self) -> tuple[str, str]:
        return (self.record.model, self.record.dataset)

    def preference(self) -> tuple[Any, ...]:
        """`LATENCY_RULE` as a sort key: the smallest is shown."""
        r = self.record
        return (
            r.speed != 1.0,
            r.chunk_ms != DEFAULT_CHUNK_MS,
            self.cell.is_sample,
            -r.n_utts,
            -self.mtime,
            self.cell.folder.name,
        )


def read_streams(results_root: Path) -> tuple[list[tuple[Path, StreamRecord]], list[str]]:
    """Every stream.json under `<root>/streaming/` (the store's one analysis reader); each
    unusable one is a problem line naming the file."""
    problems: list[str] = []
    found = read_analyses(
        Path(results_root) / STREAM_TOP,
        "stream.json",
        StreamRecord.from_dict,
        problems,
        "its latency is left out",
    )
    return found, problems


def stream_cells(
    found: Iterable[tuple[Path, StreamRecord]], problems: list[str]
) -> list[StreamCell]:
    """The stream records with their cell's summary.json (one unreadable: a problem line)."""
    out = []
    for path, rec in found:
        try:
            cell = read_cell(path.parent, rec.model)
        except RecordError as exc:
            problems.append(f"{exc}; its latency is left out")
            continue
        out.append(StreamCell(rec, cell, path.stat().st_mtime))
    return out


def latency(cells: Iterable[StreamCell]) -> dict[str, dict[str, dict[str, Any]]]:
    """{model: {dataset: the shown streaming cell's latencies}} by `LATENCY_RULE`."""
    groups: dict[tuple[str, str], list[StreamCell]] = {}
    for c in cells:
        groups.setdefault(c.key, []).append(c)
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for (model, dataset), group in sorted(groups.items()):
        shown = min(group, key=StreamCell.preference)
        out.setdefault(model, {})[dataset] = _latency_dict(shown, len(group) - 1)
    return out


def _latency_dict(s: StreamCell, others: int) -> dict[str, Any]:
    r, summary = s.record, s.cell.summary
    m = summary.metrics
    return {
        **{k: r.pooled.get(k) for k in LATENCY_KEYS},
        "chunk_ms": r.chunk_ms,
        "speed": r.speed,
        "runner": r.runner,
        "n_utts": r.n_utts,
        "n_failed": r.n_failed,
        "sample": s.cell.is_sample,
        "ter": m.ter if m else None,  # the finals' TER (the streamed hypotheses)
        "ter_ci": m.ter_ci.to_dict() if m and m.ter_ci else None,
        "dataset_hash": r.dataset_hash,
        "result_key": r.result_key,
        "path": str(s.cell.folder),
        "others": others,
        **guard_fields(r.latency_guard),
    }


def guard_fields(g: dict[str, Any] | None) -> dict[str, Any]:
    """A latency cell's guard (streaming/guard.py): `attributable` (None: a record written
    before the guard, not judged) and each reason's `why` (empty when attributable)."""
    if not g:
        return {"attributable": None, "guard_reasons": []}
    return {
        "attributable": bool(g.get("attributable")),
        "guard_reasons": [f"{r['rule']}: {r['why']}" for r in g.get("reasons") or []],
    }


def build(
    results_root: Path,
    reps: int = DEFAULT_REPS,
    level: float = DEFAULT_LEVEL,
    exclude_suspects: bool = False,
) -> dict:
    """The leaderboard as plain data: models, datasets, TER and rank per cell, mean rank.
    `reps` > 0: pairwise paired-bootstrap tests per dataset (ranking.py), whose ranges and
    shared ranks the cells and the mean rank carry; 0: ranks by TER alone.
    `exclude_suspects`: every cell scored without the references its dataset's audit flagged
    (ops/audit), ranks and CIs included."""
    scanned = scan(results_root)
    problems = list(scanned.problems)
    audits = _audits(results_root, scanned.cells, problems)
    if exclude_suspects:
        _without_suspects(scanned.cells, audits)
    table = _scored(scanned.cells.values())
    models = sorted(table)
    datasets = sorted({d for row in table.values() for d in row})
    cells: dict[str, dict[str, dict]] = {m: {} for m in models}
    rankings = {}
    for d in datasets:
        shown = [table[m][d] for m in models if d in table[m]]
        rankings[d] = r = rank_dataset(shown, level, reps)
        shared = r.shared
        for c in shown:
            cells[c.model][d] = {
                **_cell_dict(c),
                "rank": r.rank.get(c.model),
                "group": r.group.get(c.model),
                "shared_rank": shared.get(c.model),
                "not_ranked": r.not_ranked.get(c.model),
                "audit": _audit_cell(c, audits.get(d)),
            }
    means = mean_ranks(rankings)
    found, stream_problems = read_streams(results_root)
    lat = latency(stream_cells(found, stream_problems))
    return {
        "format": FORMAT,
        "models": models,
        "datasets": datasets,
        "cells": cells,
        "mean_rank": {m: means.value.get(m) for m in models},
        "mean_rank_datasets": means.datasets,
        "n_ranked": {m: means.n_ranked.get(m, 0) for m in models},
        "significance": {"reps": reps, "level": level},
        "hallucination": hallucination(scanned.cells.values()),
        "latency": lat,
        "latency_rule": LATENCY_RULE,
        "audit": audits,
        "exclude_suspects": exclude_suspects,
        "problems": problems + stream_problems,
    }


def _ci_text(ci: Any) -> str:
    """` [8.1, 11.9]`: a stored TER interval in %, blank without one."""
    if not isinstance(ci, dict) or ci.get("low") is None or ci.get("high") is None:
        return ""
    return f" [{100 * ci['low']:.1f}, {100 * ci['high']:.1f}]"


def _cell_text(c: dict | None) -> str:
    if not c or c["ter"] is None:
        return ""
    text = f"{100 * c['ter']:.2f}" + _ci_text(c.get("ci"))
    if c["sample"]:
        text += f"* (sample {c['n_utts']}/{c['n_dataset_utts']})"
    if c["rank"] is not None:
        text += f" ({c.get('group') or c['rank']})"
    elif not c["sample"]:
        text += " (not ranked)"
    if c.get("others"):
        text += f" +{c['others']}"
    if (c.get("audit") or {}).get("n_suspects"):
        text += f" !{c['audit']['n_suspects']}"
    if c.get("forced_language"):
        text += " [forced language]"
    if c.get("longform"):
        text += f" [session; {segmentation_text(c.get('segmentation'))}]"
    return text


def _md(text: str) -> str:
    """A name from a results folder or summary, as inert Markdown text: no HTML, no table break."""
    return html.escape(str(text), quote=False).replace("|", "&#124;").replace("\n", " ")


def _languages(board: dict) -> str:
    """Each dataset's language (as its cells were scored) and what marks a forced run."""
    shown = []
    for d in board["datasets"]:
        langs = sorted({str(c[d]["language"]) for c in board["cells"].values() if d in c})
        shown.append(f"{_md(d)} {_md('/'.join(langs))}")
    return (
        f"Languages: {', '.join(shown)}; `[forced language]`: run with --force on a language "
        "the model's card does not list."
    )


LATENCY_HEADS = {
    "eos_final_s": "end of speech -> final s",
    "first_partial_s": "first partial s",
}


def latency_datasets(board: dict) -> list[str]:
    """The board's datasets on which some model of the board has a streaming cell."""
    lat = board.get("latency") or {}
    return [d for d in board["datasets"] if any(d in lat.get(m, {}) for m in board["models"])]


def latency_text(lat: dict[str, Any] | None, key: str) -> str:
    """`0.412 [0.301, 0.553]` (mean [95 % CI], seconds), marked as the TER cells are (`*` a
    sample, `+N` other streaming cells) and with its feed when not the preferred one; "—"
    without a streaming cell."""
    if not lat:
        return NO_LATENCY
    fig = lat.get(key)
    if not isinstance(fig, dict) or fig.get("mean") is None:
        text = "n/a"
    else:
        ci = fig.get("ci") or {}
        text = f"{fig['mean']:.3f}"
        if ci.get("low") is not None and ci.get("high") is not None:
            text += f" [{ci['low']:.3f}, {ci['high']:.3f}]"
    if lat.get("sample"):
        text += "*"
    if lat.get("speed") != 1.0 or lat.get("chunk_ms") != DEFAULT_CHUNK_MS:
        text += f" (x{lat.get('speed'):g}, {lat.get('chunk_ms')} ms)"
    if lat.get("others"):
        text += f" +{lat['others']}"
    if lat.get("attributable") is False:
        text += f" {NOT_MODELS}"
    return text


def _latency_columns(board: dict, m: str) -> dict[str, str]:
    lat = (board.get("latency") or {}).get(m, {})
    return {
        f"{_md(d)} {head}": latency_text(lat.get(d), key)
        for d in latency_datasets(board)
        for key, head in LATENCY_HEADS.items()
    }


LATENCY_NOTE = (
    "Latency (streaming cells of ops/stream under results/streaming/, docs/STREAMING.md): "
    "end of speech to final and first partial, the mean over utterances in wall seconds with "
    "its 95 % bootstrap CI, as stream.json pools them; \u2014: the model has no streaming "
    "cell on the dataset. Shown cell: " + LATENCY_RULE + " (`(xS, C ms)`: its speed and "
    "chunk). The report's streaming page plots WER against this latency (Pareto view). "
    f"`{NOT_MODELS}`: the latency guard fired (the feed or the decoder fell behind real time, "
    "the host was busy, or the program waited for a CPU): the figure is not the model's "
    "alone; the reasons follow."
)


def _is_longform(board: dict, d: str) -> bool:
    return any(row.get(d, {}).get("longform") for row in board["cells"].values())


def _rank_order(board: dict) -> list[str]:
    """The models best mean rank first (none last), then by name."""
    means = board["mean_rank"]
    return sorted(board["models"], key=lambda m: (means[m] is None, means[m] or 0, m))


def _mean_text(board: dict, m: str) -> str:
    """`1.5`, `1 (tie)` where another model has the same mean rank, blank without one."""
    value = board["mean_rank"][m]
    if value is None:
        return ""
    tie = sum(v == value for v in board["mean_rank"].values()) > 1
    return f"{value:g}" + (" (tie)" if tie else "")


def _ter_table(board: dict, datasets: list[str], title: str, mean: bool) -> str:
    head = ["model", *(_md(d) for d in datasets)] + (["mean rank"] if mean else [])
    rows = []
    for m in _rank_order(board):
        row = {"model": _md(m), "mean rank": _mean_text(board, m)}
        row.update({_md(d): _cell_text(board["cells"][m].get(d)) for d in datasets})
        rows.append(row)
    return f"### {title}\n\n" + markdown(rows, head, fmt=str)


def _latency_table(board: dict) -> str:
    heads = [f"{_md(d)} {h}" for d in latency_datasets(board) for h in LATENCY_HEADS.values()]
    rows = [{"model": _md(m), **_latency_columns(board, m)} for m in _rank_order(board)]
    return "### Streaming latency: seconds, mean [95 % CI]\n\n" + markdown(
        rows, ["model", *heads], fmt=str
    )


def _notes(board: dict, lat: bool) -> list[str]:
    common = board.get("mean_rank_datasets") or []
    sig = board.get("significance") or {}
    reps, level = sig.get("reps") or 0, sig.get("level") or DEFAULT_LEVEL
    tested = (
        f"`(1-2)`: the rank range the paired bootstrap allows ({reps} replicates over "
        f"utterances, {100 * level:g} %): models it cannot tell apart share it"
        if reps
        else "no significance tests (--reps 0): ranks by TER alone"
    )
    notes = [
        "TER in % (word error rate, or character error rate for character-unit datasets) "
        "with its 95 % bootstrap CI over utterances in brackets.",
        "`(N)`: rank on the dataset, 1 = best, among the results scored on the same dataset "
        f'content and utterances (docs/RESULTS.md, "Ranking"); {tested}.',
        (
            f"Mean rank over {', '.join(_md(d) for d in common)} (the datasets every ranked "
            "model is ranked on): a model gives up a rank only to a model significantly "
            "better, so two models the tests cannot tell apart tie."
            if common
            else "No dataset is ranked for every model, so no mean rank is given."
        ),
        "`*`: a sample (--max-utts), ranked only beside samples of the same selection where "
        "no full result exists; `+N`: other results stored beside the shown one (another "
        "dataset content, scorer options or sample).",
        _languages(board),
    ]
    notes += _audit_notes(board)
    if any(_is_longform(board, d) for d in board["datasets"]):
        notes.append(LONGFORM_NOTE)
    if lat:
        notes.append(LATENCY_NOTE)
        notes += _guard_notes(board)
    return notes


def _guard_notes(board: dict) -> list[str]:
    """One footnote per latency cell the guard marked `!`, with its reasons."""
    out = []
    for m, by_ds in sorted((board.get("latency") or {}).items()):
        for d, lat in sorted(by_ds.items()):
            if lat.get("attributable") is False:
                out.append(
                    f"`{NOT_MODELS}` {_md(m)} on {_md(d)}: latencies not attributable to the "
                    f'model (docs/STREAMING.md, "Latency guard"): '
                    + "; ".join(_md(r) for r in lat.get("guard_reasons") or [])
                )
    return out


def to_markdown(board: dict) -> str:
    """Tables first (accuracy, long-form, latency, non-speech), then the notes, then what
    could not be read."""
    short = [d for d in board["datasets"] if not _is_longform(board, d)]
    long = [d for d in board["datasets"] if _is_longform(board, d)]
    tables = []
    if short:
        tables.append(_ter_table(board, short, "Accuracy: TER % [95 % CI] (rank)", True))
    if long:
        title = "Long-form: session TER % [95 % CI] (rank)"
        tables.append(_ter_table(board, long, title, not short))
        if any(c.get("sessions") for row in board["cells"].values() for c in row.values()):
            tables.append(sessions_markdown(board, long))
    lat = bool(latency_datasets(board))
    if lat:
        tables.append(_latency_table(board))
    if board.get("hallucination"):
        tables.append(hallucination_markdown(board))
    text = "\n".join(tables)
    text += "\nNotes:\n" + "".join(f"- {n}\n" for n in _notes(board, lat))
    if board.get("problems"):
        text += "\nNot shown (unreadable):\n" + "".join(f"- {_md(p)}\n" for p in board["problems"])
    return text


def _audit_notes(board: dict) -> list[str]:
    audits = board.get("audit") or {}
    if not audits:
        return []
    each = "; ".join(
        f"{_md(d)}: {a['n_suspects']} ({', '.join(_md(i) for i in a['suspects']) or 'none'})"
        + ("" if a["current"] else f", stale: rerun ops/audit -d {_md(d)}")
        for d, a in sorted(audits.items())
    )
    left = (
        "suspect references left out (--exclude-suspects): TER, CIs and ranks are over the "
        "other utterances."
        if board.get("exclude_suspects")
        else "`--exclude-suspects` scores without them."
    )
    return [
        "`!N`: N references of the dataset are suspect: independent models (different weights) "
        f"agree with each other and all disagree with them (ops/audit; docs/SCORING.md). {each}. "
        + left
    ]


LONGFORM_NOTE = (
    "`[session; ...]`: a long-form dataset (recordings of minutes), TER over whole sessions "
    "(each recording's hypothesis aligned with its whole reference), with how the recordings "
    "reached the model: `whole` (the model's own long-form decoding) or the platform's "
    "segmentation (`vad/silero`, `vad/webrtc`, `windows`; run.json `options.segmentation`)."
)


def sessions_rows(board: dict, datasets: list[str]) -> list[dict[str, str]]:
    """The long-form view: one row per model and long-form dataset with session metrics,
    each `rate [low, high]` in % (intervals over sessions); `-` where the cell's hypothesis
    does not support the metric, `not scored` where the metric refused it."""
    found = [
        (m, d, c["sessions"])
        for m in _rank_order(board)
        for d in datasets
        if (c := board["cells"][m].get(d)) and c.get("sessions")
    ]
    metrics = [k for k in session_order() if any(k in f for _, _, f in found)]
    labels = {k: next(f[k]["label"] for _, _, f in found if k in f) for k in metrics}
    rows = []
    for m, d, figs in found:
        row = {"model": _md(m), "dataset": _md(d)}
        n = max((f.get("n_sessions") or 0 for f in figs.values()), default=0)
        row["sessions"] = str(n)
        for k in metrics:
            row[f"{labels[k]} %"] = session_figure_text(figs.get(k))
        rows.append(row)
    return rows


def sessions_markdown(board: dict, datasets: list[str]) -> str:
    """The long-form view: cpWER/tcpWER (or ORC-WER and session WER) and DER/JER per cell."""
    rows = sessions_rows(board, datasets)
    head = list(rows[0]) if rows else []
    return (
        "### Long-form: session metrics % [95 % CI over sessions]\n\n"
        "Speaker-attributed WER (cpWER, tcpWER; ORC-WER and session WER for a hypothesis "
        "without speakers) and who spoke when (DER, JER, collar 0 s) of each long-form cell, "
        "intervals resampling whole sessions (docs/LONGFORM.md).\n\n"
        + markdown(rows, head, fmt=str)
    )


def _interval(ci: Any, scale: float = 1.0, fmt: str = "{:.1f}") -> str:
    if not isinstance(ci, list | tuple) or len(ci) != 2 or None in ci:
        return ""
    return f" [{fmt.format(scale * ci[0])}, {fmt.format(scale * ci[1])}]"


def hallucination_rows(board: dict) -> list[dict[str, str]]:
    """One row per model and non-speech dataset, beside the model's long-form session TERs."""
    rows = []
    for m, by_ds in sorted(board.get("hallucination", {}).items()):
        sessions = [
            f"{_md(d)} {100 * c['ter']:.2f}"
            for d, c in sorted(board["cells"].get(m, {}).items())
            if c.get("longform") and c["ter"] is not None
        ]
        for d, f in sorted(by_ds.items()):
            wpm, share = f.get("words_per_min"), f.get("share_with_output")
            rows.append(
                {
                    "model": _md(m),
                    "dataset": _md(d),
                    "clips": str(f.get("clips")),
                    "words/min [95 % CI]": "-"
                    if wpm is None
                    else f"{wpm:.1f}" + _interval(f.get("words_per_min_ci")),
                    "clips with output [95 % CI]": "-"
                    if share is None
                    else f"{100 * share:.0f} %" + _interval(f.get("share_ci"), 100, "{:.0f}"),
                    "session TER %": ", ".join(sessions) or "-",
                }
            )
    return rows


def hallucination_markdown(board: dict) -> str:
    """The non-speech table: words a model writes on silence, noise and music."""
    rows = hallucination_rows(board)
    head = list(rows[0]) if rows else []
    return (
        "### Hallucination on non-speech\n\nReference-free datasets such as nonspeech_clips "
        "(docs/LONGFORM.md): words per minute of non-speech and the share of clips with any "
        "output, 95 % bootstrap intervals over clips; beside them the model's long-form "
        "session TERs.\n\n" + markdown(rows, head, fmt=str)
    )


def to_csv(board: dict) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(
        [
            "model",
            *(f"{d} TER%" for d in board["datasets"]),
            *(f"{d} rank" for d in board["datasets"]),
            "mean rank",
            *(f"{d} {k}" for d in latency_datasets(board) for k in LATENCY_KEYS),
            *(f"{d} TER% {end}" for d in board["datasets"] for end in ("low", "high")),
            *(f"{d} rank range" for d in board["datasets"]),
        ]
    )
    for m in board["models"]:
        cells = [board["cells"][m].get(d) for d in board["datasets"]]
        w.writerow(
            [
                m,
                *(
                    ""
                    if not c or c["ter"] is None
                    else f"{100 * c['ter']:.2f}" + ("*" if c["sample"] else "")
                    for c in cells
                ),
                *("" if not c or c["rank"] is None else c["rank"] for c in cells),
                board["mean_rank"][m] if board["mean_rank"][m] is not None else "",
                *_latency_csv(board, m),
                *(_ci_end(c, end) for c in cells for end in ("low", "high")),
                *("" if not c else c.get("group") or "" for c in cells),
            ]
        )
    return buf.getvalue()


def _ci_end(c: dict | None, end: str) -> str:
    ci = (c or {}).get("ci") or {}
    return "" if ci.get(end) is None else f"{100 * ci[end]:.2f}"


def _latency_csv(board: dict, m: str) -> list[str]:
    """The mean of each latency (seconds), blank without a streaming cell."""
    lat = (board.get("latency") or {}).get(m, {})
    out = []
    for d in latency_datasets(board):
        for k in LATENCY_KEYS:
            fig = (lat.get(d) or {}).get(k) or {}
            out.append("" if fig.get("mean") is None else f"{fig['mean']:.3f}")
    return out


def write(board: dict, out_dir: Path) -> dict[str, Path]:
    """Write leaderboard.{csv,json,md} atomically into out_dir."""
    out_dir = Path(out_dir)
    paths = {
        "csv": out_dir / "leaderboard.csv",
        "json": out_dir / "leaderboard.json",
        "md": out_dir / "leaderboard.md",
    }
    atomic_write_text(paths["csv"], to_csv(board))
    atomic_write_json(paths["json"], board)
    atomic_write_text(paths["md"], to_markdown(board))
    return paths


MODEL_COLUMNS = (
    "model",
    "type",
    "parameters",
    "weights",
    "image",
    "TER %",
    "mTER %",
    "RTF",
    "latency p50 s",
    "latency p90 s",
    "coverage",
    "utts",
    "runner",
)


def model_rows(models: list, results_root: Path, dataset: str) -> list[dict[str, str]]:
    """One row per model with a reported result on `dataset`: accuracy, speed, sizes.

    Reads the same cells as the leaderboard; nothing is typed by hand, so the table in
    docs/MODELS.md can be regenerated and diffed.
    """
    from asrbench.images import image_size
    from asrbench.modelcard import human

    table, _ = collect(results_root)
    rows = []
    for m in models:
        c = table.get(m.id, {}).get(dataset)
        if c is None:
            continue
        met, tim = c.summary.metrics, c.summary.timing or {}
        assert met is not None, c.folder  # collect() keeps only cells with an error rate
        lat = tim.get("latency_s") or {}

        def pct(x: float | None) -> str:
            return "-" if x is None else f"{100 * x:.2f}"

        def num(x: float | None, fmt: str = "{:.3f}") -> str:
            return "-" if x is None else fmt.format(x)

        rows.append(
            {
                "model": m.id,
                "type": m.card.type,
                "parameters": human(m.card.parameters),
                "weights": human(m.card.size_bytes, "B"),
                "image": human(image_size(c.summary.model_identity), "B"),
                "TER %": pct(met.ter) + ("*" if c.kind == "sample" else ""),
                "mTER %": pct(met.mter),
                "RTF": num(tim.get("rtf")),
                "latency p50 s": num(lat.get("p50"), "{:.2f}"),
                "latency p90 s": num(lat.get("p90"), "{:.2f}"),
                "coverage": num(met.coverage, "{:.2f}"),
                "utts": str(met.n_utts),
                "runner": str(c.summary.runner or "-"),
            }
        )
    return rows
