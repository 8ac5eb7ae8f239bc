"""Capacity: how many simultaneous real-time streams of a model this machine sustains.

    .venv/bin/python benchmarks/stream_capacity.py [--model pocketsphinx_en ...]
        [--dataset mini_en] [--max-utts 8] [--max-n 16] [--speed 1] [--chunk-ms 100]
        [--runner docker|local] [--all-levels] [--results DIR] [--json out.json]

For each model, `asrbench.streaming.capacity` (what `ops/stream --capacity` runs) feeds N
copies of the model's streaming program the same `--max-utts` utterances at once, paced at
`--speed` x real time, for N = 1, 2, 4, ... up to `--max-n`, stopping at the first N not
sustained (`--all-levels`: every N). Sustained (docs/STREAMING.md, "Capacity"): nothing
failed, p90 end of speech -> final within 1.5x N=1's, median backlog growth <= 0.1 s per
second of audio. Prints a row per (model, N) and the capacity; the machine's CPU count and
load average beside them, as the figure is only as good as the machine was idle. With
`--runner local`, each N's `cores per stream` (the programs' CPU seconds per second of
real-time stream) gives the compute-bound estimate `CPUs / cores per stream`, which other
work's load hardly moves.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from asrbench.resolve import resolve_dataset, resolve_model
from asrbench.streaming import capacity
from asrbench.streaming.run import StreamSpec


def parse() -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--model", nargs="+", default=["pocketsphinx_en"])
    ap.add_argument("--dataset", default="mini_en")
    ap.add_argument("--max-utts", type=int, default=8, help="utterances per stream")
    ap.add_argument("--max-n", type=int, default=16, help="the most simultaneous streams")
    ap.add_argument("--speed", type=float, default=1.0)
    ap.add_argument("--chunk-ms", type=int, default=100)
    ap.add_argument("--runner", default="docker", choices=["docker", "local"])
    ap.add_argument("--all-levels", action="store_true", help="do not stop at the first failure")
    ap.add_argument("--results", type=Path, default=None, help="default: a temporary folder")
    ap.add_argument("--json", type=Path, default=None, help="write every record here")
    return ap.parse_args()


def row(model: str, lv: dict) -> str:
    e, late, cps = lv["eos_final_s"], lv["pacing"]["lateness_s"], lv.get("cores_per_stream")
    return (
        f"| {model} | {lv['n']} | {'yes' if lv['sustained'] else 'no'} | "
        f"{e['p50']:.3f} / {e['p90']:.3f} | {lv['rtf']['mean']:.3f} | "
        f"{lv['backlog_s']['p90']:.3f} | {_f(lv['growth']['p50'])} | "
        f"{1000 * late['p99']:.1f} | {lv['wall_s']:.0f} | {_f(cps)} |"
    )


def _f(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.3f}"


def main() -> int:
    args = parse()
    results = args.results or Path(tempfile.mkdtemp(prefix="stream-capacity-"))
    spec = StreamSpec(args.runner, args.chunk_ms, args.speed, args.max_utts, 0, results)
    ds = resolve_dataset(args.dataset)
    print(f"{os.cpu_count()} CPUs, load average {os.getloadavg()}; runner {args.runner}, "
          f"{args.max_utts} utterance(s) per stream, {args.speed:g}x, "
          f"{args.chunk_ms} ms chunks")  # fmt: skip
    print("| model | N | sustained | eos->final p50 / p90 (s) | RTF under pacing | "
          "backlog p90 (s) | backlog growth p50 | send lateness p99 (ms) | wall (s) | "
          "cores per stream |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|---|---|")
    records = {}
    for model in args.model:
        folder, rec = capacity.capacity(
            resolve_model(model),
            ds,
            spec,
            capacity.Probe(args.max_n, until_fail=not args.all_levels),
            progress=lambda lv, m=model: print(row(m, lv), flush=True),
        )
        print(f"{model}: capacity {rec.capacity} ({rec.machine})")
        records[model] = {**rec.to_dict(), "folder": str(folder)}
    if args.json:
        args.json.write_text(json.dumps(records, indent=2, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
