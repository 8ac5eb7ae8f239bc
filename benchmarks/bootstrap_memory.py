"""Peak memory of the bootstrap: every replicate at once (before issue 30) against chunks (now).

The bootstrap draws, per replicate, how many times each group of identical utterance rows is
resampled. Before, all `reps x G` draw counts were held at once (then copied to share |hyp|
out), so `ops/score --bootstrap 1000000000` grew to 14 GB in a minute. Now they are drawn in
chunks of `scoring.stats.CHUNK_CELLS` cells, and only the few sums a replicate keeps grow
with the count. Each strategy runs in its own process on the same seeded corpus; the report
gives tracemalloc's peak (numpy's arrays included) and the process's peak RSS.

    .venv/bin/python benchmarks/bootstrap_memory.py [--reps 100000] [--utts 1000]
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def corpus(n: int, seed: int = 1) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per-utterance errors, |ref| and |hyp|: most rows distinct, as in a real corpus."""
    rng = np.random.default_rng(seed)
    n_ref = rng.integers(5, 60, n)
    errs = rng.binomial(n_ref, 0.2)
    n_hyp = np.maximum(n_ref + rng.integers(-3, 4, n), 0)
    return errs, n_ref, n_hyp


def old_replicates(cols: np.ndarray, reps: int, seed: int, split: np.ndarray) -> np.ndarray:
    """The strategy before issue 30 (scoring/stats.py at 102eeaf): one draw of every replicate."""
    from scoring.stats import _distinct_rows, _shared_out

    rng = np.random.default_rng(seed)
    n = cols.shape[0]
    rows, counts, inverse = _distinct_rows(cols, inverse=True)
    weights = rng.multinomial(n, counts / n, size=reps)
    sums = (weights @ rows.astype(np.int64)).astype(np.float64)
    extra = _shared_out(rng, weights, counts, inverse, np.asarray(split, dtype=np.int64))
    return np.column_stack([sums, extra.astype(np.float64)])


def measure(strategy: str, reps: int, utts: int) -> dict:
    from scoring.stats import _distinct_rows, _replicates, chunk_size

    errs, n_ref, n_hyp = corpus(utts)
    cols = np.column_stack([errs, n_ref, np.maximum(n_ref, n_hyp)]).astype(np.float64)
    groups = len(_distinct_rows(cols)[1])
    tracemalloc.start()
    start = time.perf_counter()
    if strategy == "old":
        sums = old_replicates(cols, reps, 0, n_hyp)
    else:
        sums = _replicates(cols, reps, 0, split=n_hyp)
    seconds = time.perf_counter() - start
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return {
        "strategy": strategy,
        "reps": reps,
        "utts": utts,
        "groups": groups,
        "chunk": chunk_size(groups) if strategy == "chunked" else reps,
        "peak_traced_mib": round(peak / 2**20, 1),
        "peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "seconds": round(seconds, 2),
        "mean_ter": float((sums[:, 0] / sums[:, 1]).mean()),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=100_000)
    ap.add_argument("--utts", type=int, default=1000)
    ap.add_argument("--one", choices=("old", "chunked"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        print(json.dumps(measure(args.one, args.reps, args.utts)))
        return
    rows = []
    for strategy in ("old", "chunked"):
        proc = subprocess.run(
            [
                sys.executable,
                __file__,
                "--one",
                strategy,
                "--reps",
                str(args.reps),
                "--utts",
                str(args.utts),
            ],
            capture_output=True,
            text=True,
            check=True,
        )
        rows.append(json.loads(proc.stdout))
    print(
        "| strategy | replicates x utterances (groups) | chunk | peak traced | peak RSS "
        "| time |\n|---|---|---|---|---|---|"
    )
    for r in rows:
        print(
            f"| {r['strategy']} | {r['reps']:,} x {r['utts']:,} ({r['groups']}) | "
            f"{r['chunk']:,} | {r['peak_traced_mib']:,} MiB | {r['peak_rss_mib']:,} MiB | "
            f"{r['seconds']} s |"
        )
    print(json.dumps(rows))


if __name__ == "__main__":
    main()
