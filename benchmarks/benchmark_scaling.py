"""Throughput of the benchmark job with 1 and 2 parallel jobs, and the platform's own overhead.

    .venv/bin/python benchmarks/benchmark_scaling.py [--model pocketsphinx_en] [--dataset mini_en]
        [--runner docker] [--jobs 1 2] [--max-utts N] [--json out.json]

For each job count: a fresh hypothesis cache (so the model really runs), then the job as
`ops/benchmark` runs it. Reported per run, from run.json:
  throughput        audio seconds per wall second of the whole job
  overhead          share of wall time outside the shard phase and scoring: resolving, image
                    lookup, dataset hash, cache lock/harvest/merge, result and run.json writing
  startup           share of wall time in container start + model load (shard wall minus the
                    model's own per-utterance processing), the price of one container per shard
Then the same command once more on the warm cache: its wall time without scoring.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from asrbench.benchmark import JobSpec, run_benchmark
from asrbench.resolve import resolve_model
from asrbench.runners import shared_runner


def measure(args: argparse.Namespace, jobs: int, cache: Path, results: Path) -> dict:
    s = run_benchmark(
        args.model,
        args.dataset,
        JobSpec(
            runner=args.runner,
            results_root=results,
            jobs=jobs,
            max_utts=args.max_utts,
            cache_root=cache,
            progress=False,
            command=("benchmarks/benchmark_scaling.py",),
        ),
    )
    out_dir = s.placement.path
    run = json.loads((out_dir / "run.json").read_text())
    t = run["times"]
    timing = s.summary.timing or {}
    shard_proc: dict[int, float] = {}
    per_utt = {}
    for line in (out_dir / "timing.tsv").read_text().splitlines():
        uid, proc, _ = line.split("\t")
        per_utt[uid] = float(proc)
    wall = t["wall_s"]
    startup = 0.0
    if run["shards"]:
        # shard wall minus the model's processing inside it; the longest shard sets the pace
        sizes = [sh["n_utts"] for sh in run["shards"]]
        total_proc = sum(per_utt.values())
        for sh, n in zip(run["shards"], sizes, strict=True):
            shard_proc[sh["shard"]] = total_proc * n / sum(sizes)
        startup = max(sh["wall_s"] - shard_proc[sh["shard"]] for sh in run["shards"])
        startup = max(startup, max(sh["startup_s"] for sh in run["shards"]))
    overhead = wall - t["run_s"] - t["score_s"]
    return {
        "jobs": jobs,
        "cache_hit": run["cache"]["hit"],
        "n_utts": s.summary.selection.n_utts,
        "audio_s": timing["audio_s"],
        "wall_s": wall,
        "run_s": t["run_s"],
        "score_s": t["score_s"],
        "overhead_s": round(overhead, 3),
        "overhead_share": round(overhead / wall, 4),
        "startup_share": round(startup / wall, 4) if wall else None,
        "throughput_audio_s_per_s": round(timing["audio_s"] / wall, 3),
        "rtf": timing["rtf"],
        "wer": s.metrics.ter if s.metrics else None,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", default="pocketsphinx_en")
    ap.add_argument("--dataset", default="mini_en")
    ap.add_argument("--runner", default="docker")
    ap.add_argument("--jobs", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--max-utts", type=int, default=None)
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args()
    shared_runner(args.runner).prepare(resolve_model(args.model))  # build the image outside timing
    rows = []
    with tempfile.TemporaryDirectory(prefix="asrbench-scaling-") as tmp:
        for jobs in args.jobs:
            cache = Path(tmp) / f"cache-{jobs}"
            rows.append(measure(args, jobs, cache, Path(tmp) / f"results-{jobs}"))
            print(json.dumps(rows[-1]), file=sys.stderr)
        hit = measure(args, args.jobs[-1], cache, Path(tmp) / "results-hit")
    load = os.getloadavg()
    print(f"host: {os.cpu_count()} cores, load average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}")
    print(
        "| jobs | utts | audio s | wall s | throughput (audio s / s) | RTF | overhead | "
        "container start + model load |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(
            f"| {r['jobs']} | {r['n_utts']} | {r['audio_s']:.1f} | {r['wall_s']:.1f} | "
            f"{r['throughput_audio_s_per_s']:.2f} | {r['rtf']:.3f} | "
            f"{100 * r['overhead_share']:.1f}% | {100 * r['startup_share']:.1f}% |"
        )
    print(
        f"\ncache hit (same command again): wall {hit['wall_s']:.2f} s, of which scoring "
        f"{hit['score_s']:.2f} s; without scoring {hit['wall_s'] - hit['score_s']:.2f} s"
    )
    if args.json:
        args.json.write_text(
            json.dumps({"runs": rows, "cache_hit": hit, "load": load}, indent=2) + "\n"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
