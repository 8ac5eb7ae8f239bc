"""The files of one benchmark result cell, written into a staging folder and moved into place.

    summary.json        the asrbench summary schema (asrbench/results/summary.py), written once
    utterances.jsonl    one record per utterance (asrbench/results/reports.py), written once
    hyp.raw.tsv         what the model wrote; failed.tsv, timing.tsv (and cost.tsv) beside it
    ref.norm.tsv, hyp.norm.tsv   the texts after normalisation
    scoring/            alignment.txt, hyp.pra, hyp.sys, table.txt
    logs/               the shards' logs
    run.json            provenance (written by run.py)

summary.json holds only what is a function of the inputs (so a rerun reproduces it byte for
byte) plus one `timing` section with measured speeds; run-specific facts live in run.json.
"""

from __future__ import annotations

import math
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path

import numpy as np

from asrbench.benchmark.errors import BenchmarkError
from asrbench.benchmark.output import Records
from asrbench.dataset import Utterance
from asrbench.fsio import atomic_write_text
from asrbench.results.reports import (
    flagged_lines,
    unscored_lines,
    utterance_lines,
    write_reports,
    write_utterances,
)
from asrbench.results.summary import Summary, write_summary
from scoring.scorer import ScoreResult


def check_writable(folder: Path, what: str, min_free_mb: int) -> None:
    """Fail before a run starts when `folder` cannot take results (read-only, full disk)."""
    import os

    folder = Path(folder)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        probe = folder / f".write-probe-{os.getpid()}"
        probe.write_bytes(b"ok")
        probe.unlink()
    except OSError as exc:
        raise BenchmarkError(
            f"{what} {folder} is not writable ({exc.strerror or exc}); choose another location "
            "(--results / ASRBENCH_CACHE) or fix its permissions"
        ) from None
    free = shutil.disk_usage(folder).free
    if free < min_free_mb * 2**20:
        raise BenchmarkError(
            f"{what} {folder}: only {free / 2**20:.0f} MiB free, need at least "
            f"{min_free_mb} MiB (ASRBENCH_MIN_FREE_MB); free some space first"
        )


def _tsv(rows: Sequence[tuple[str, str]]) -> str:
    return "".join(f"{a}\t{b}\n" for a, b in rows)


def cost_stats(utts: Sequence[Utterance], rec: Records) -> dict | None:
    """The model's per-utterance cost estimates (`cost.tsv`, API models) summed over the
    selection; None when the model writes none. Utterances without an estimate are counted."""
    usd, n, bad = 0.0, 0, []
    for u in utts:
        v = rec.cost.get(u.id)
        if v is None:
            continue
        try:
            value = float(v)
        except ValueError:
            bad.append(u.id)
            continue
        if not math.isfinite(value) or value < 0:
            bad.append(u.id)
            continue
        usd += value
        n += 1
    if not n and not bad:
        return None
    return {
        "usd": round(usd, 6),
        "n_costed": n,
        "n_utts": len(utts),
        "unparsable": bad,
        "source": "estimate written by the model (cost.tsv, its card's list price)",
    }


def timing_stats(utts: Sequence[Utterance], rec: Records) -> dict:
    """RTF = total processing time / total audio duration, and per-utterance latency."""
    proc: list[float] = []
    audio = 0.0
    for u in utts:
        t = rec.timing.get(u.id)
        if t is None:
            continue
        try:
            value = float(t.split("\t")[0])
        except ValueError:
            continue
        if not math.isfinite(value) or value < 0:
            continue  # read_output reports these; never a NaN in summary.json
        proc.append(value)
        audio += u.duration
    total = sum(proc)
    qs = (0.5, 0.9, 0.95, 0.99)
    # numpy's default (linear) percentile, the same definition as the spreadsheet PERCENTILE
    lat = np.percentile(proc, [100 * q for q in qs]) if proc else [None] * len(qs)
    return {
        "n_timed": len(proc),
        "processing_s": round(total, 4),
        "audio_s": round(audio, 3),
        "rtf": round(total / audio, 5) if audio else None,
        "latency_s": {
            f"p{int(q * 100)}": (round(float(v), 4) if v is not None else None)
            for q, v in zip(qs, lat, strict=True)
        },
        "latency_max_s": round(max(proc), 4) if proc else None,
    }


def write_cell_files(
    out: Path,
    utts: Sequence[Utterance],
    rec: Records,
    result: ScoreResult | None,
    summary: Summary,
    logs: Sequence[Path],
    secret_hits: Mapping[str, list[str]] | None = None,
) -> None:
    """Write every file of the cell into `out` (a staging folder); summary.json last.

    `result` is None for a reference-free dataset: the hypotheses are kept, nothing is scored.
    `secret_hits` (utterance ID -> names of declared secrets whose value its hypothesis holds)
    flags those utterances (`secret_in_hyp`) and counts them in summary.json
    (`n_secret_in_hyp`); the hypotheses themselves are written as the model wrote them.
    """
    hits = dict(secret_hits or {})
    ids = [u.id for u in utts]
    atomic_write_text(out / "hyp.raw.tsv", _tsv([(i, rec.hyp[i]) for i in ids if i in rec.hyp]))
    atomic_write_text(
        out / "failed.tsv", _tsv([(i, rec.failed[i]) for i in ids if i in rec.failed])
    )
    atomic_write_text(
        out / "timing.tsv", _tsv([(i, rec.timing[i]) for i in ids if i in rec.timing])
    )
    if any(i in rec.cost for i in ids):
        atomic_write_text(out / "cost.tsv", _tsv([(i, rec.cost[i]) for i in ids if i in rec.cost]))
    if result is None:
        write_utterances(
            out / "utterances.jsonl",
            flagged_lines(
                unscored_lines([(u.id, u.duration) for u in utts], rec.hyp, rec.failed), hits
            ),
        )
    else:
        atomic_write_text(
            out / "ref.norm.tsv", _tsv([(u.id, u.ref_norm) for u in result.utterances])
        )
        atomic_write_text(
            out / "hyp.norm.tsv", _tsv([(u.id, u.hyp_norm) for u in result.utterances])
        )
        write_utterances(
            out / "utterances.jsonl",
            flagged_lines(
                utterance_lines(
                    result,
                    {u.id: u.text for u in utts},
                    rec.hyp,
                    {u.id: u.duration for u in utts},
                    rec.failed,
                ),
                hits,
            ),
        )
        write_reports(out / "scoring", result)
    for k, log in enumerate(logs):
        if Path(log).is_file():
            (out / "logs").mkdir(exist_ok=True)
            shutil.copy2(log, out / "logs" / f"shard-{k}.log")
    write_summary(out / "summary.json", replace(summary, n_secret_in_hyp=len(hits)))
