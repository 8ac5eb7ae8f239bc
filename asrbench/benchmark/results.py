"""The files of one result cell `<results>/<model>/<dataset>/`, all written atomically.

summary.json holds only what is a function of the inputs (so a rerun reproduces it byte for
byte) plus one `timing` section with measured speeds; run-specific wall-clock facts live in
run.json.
"""

from __future__ import annotations

import json
import math
import os
import shutil
from collections.abc import Sequence
from pathlib import Path

from asrbench.benchmark.cache import Records
from asrbench.benchmark.errors import BenchmarkError
from asrbench.benchmark.score import Scored
from asrbench.dataset import Utterance
from asrbench.fsio import atomic_write_json, atomic_write_text

SUMMARY_FORMAT = "asrbench-summary-v1"
MIN_FREE_BYTES = int(os.environ.get("ASRBENCH_MIN_FREE_MB", "200")) * 1024 * 1024


def check_writable(folder: Path, what: str, min_free: int = MIN_FREE_BYTES) -> None:
    """Fail before a run starts when `folder` cannot take results (read-only, full disk)."""
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
    if free < min_free:
        raise BenchmarkError(
            f"{what} {folder}: only {free / 2**20:.0f} MiB free, need at least "
            f"{min_free / 2**20:.0f} MiB (ASRBENCH_MIN_FREE_MB); free some space first"
        )


def _tsv(rows: Sequence[tuple[str, str]]) -> str:
    return "".join(f"{a}\t{b}\n" for a, b in rows)


def _percentile(sorted_vals: list[float], q: float) -> float | None:
    if not sorted_vals:
        return None
    pos = (len(sorted_vals) - 1) * q
    lo, hi = math.floor(pos), math.ceil(pos)
    return sorted_vals[lo] + (sorted_vals[hi] - sorted_vals[lo]) * (pos - lo)


def timing_stats(utts: Sequence[Utterance], rec: Records) -> dict:
    """RTF = total processing time / total audio duration, and per-utterance latency."""
    proc: list[float] = []
    audio = 0.0
    for u in utts:
        t = rec.timing.get(u.id)
        if t is None:
            continue
        try:
            proc.append(float(t.split("\t")[0]))
        except ValueError:
            continue
        audio += u.duration
    total = sum(proc)
    lat = sorted(proc)
    return {
        "n_timed": len(proc),
        "processing_s": round(total, 4),
        "audio_s": round(audio, 3),
        "rtf": round(total / audio, 5) if audio else None,
        "latency_s": {f"p{int(q * 100)}": (round(v, 4) if v is not None else None)
                      for q in (0.5, 0.9, 0.95, 0.99) for v in [_percentile(lat, q)]},
        "latency_max_s": round(lat[-1], 4) if lat else None,
    }


def write_cell(out: Path, utts: Sequence[Utterance], rec: Records, scored: Scored,
               head: dict, logs: Sequence[Path]) -> dict:
    """Write every file of the cell; returns the summary dict written to summary.json."""
    out.mkdir(parents=True, exist_ok=True)
    ids = [u.id for u in utts]
    atomic_write_text(out / "hyp.raw.tsv", _tsv([(i, rec.hyp[i]) for i in ids if i in rec.hyp]))
    atomic_write_text(out / "failed.tsv",
                      _tsv([(i, rec.failed[i]) for i in ids if i in rec.failed]))
    atomic_write_text(out / "timing.tsv",
                      _tsv([(i, rec.timing[i]) for i in ids if i in rec.timing]))
    by_id = {u["id"]: u for u in scored.utterances}
    atomic_write_text(out / "ref.norm.tsv", _tsv([(i, by_id[i]["ref_norm"]) for i in ids]))
    atomic_write_text(out / "hyp.norm.tsv", _tsv([(i, by_id[i]["hyp_norm"]) for i in ids]))
    lines = []
    for u in utts:
        # No timings here (they are in timing.tsv): this file must reproduce byte for byte.
        d = dict(by_id[u.id])
        d.update({"duration": u.duration, "ref": u.text, "hyp": rec.hyp.get(u.id),
                  "failed": rec.failed.get(u.id)})
        lines.append(json.dumps(d, sort_keys=True, ensure_ascii=False) + "\n")
    atomic_write_text(out / "utterances.jsonl", "".join(lines))
    reports = scored.write_reports(out / "scoring")
    logdir = out / "logs"
    shutil.rmtree(logdir, ignore_errors=True)
    for k, log in enumerate(logs):
        if Path(log).is_file():
            logdir.mkdir(exist_ok=True)
            shutil.copy2(log, logdir / f"shard-{k}.log")
    failed = [{"id": i, "reason": rec.failed[i]} for i in ids if i in rec.failed]
    summary = {
        "format": SUMMARY_FORMAT,
        **head,
        "scorer": {"name": scored.name, "config_hash": scored.config_hash},
        "metrics": scored.summary,
        "failed": failed,
        "n_failed": len(failed),
        "reports": reports,
        "timing": timing_stats(utts, rec),
    }
    atomic_write_json(out / "summary.json", summary)
    return summary
