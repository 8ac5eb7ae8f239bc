"""A long pair's scoring in a fresh process, cold and then warm, this checkout against another
(issue 43 item 1; docs/MEASUREMENTS.md, "The 30,000-word pair's DAE work").

`ops/score` scores a pair once per process, so what its first call pays (modules imported
on the way, first calls into numpy) is part of its cost, and an in-process loop that times
the second call misses it. For each checkout, each repeat starts one process (its own folder
first on sys.path) that builds a Scorer (nsw off, no bootstrap), scores the pair of
`benchmarks/scoring_scale.py` (read from a file this script writes) once (cold) and again
(warm), and reports the CPU seconds of both calls and the modules the first call imported.
Best of the repeats, the two checkouts in turn; the counts are checked equal.

    .venv/bin/python benchmarks/dae_windowed_cold.py --before /tmp/merge-snap \\
        [--words 10000,30000,100000] [--repeats 7]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

CHILD = """
import json, os, sys, time
sys.path.insert(0, os.getcwd())
import scoring
assert scoring.__file__.startswith(os.getcwd()), scoring.__file__
from scoring.scorer import Scorer, ScorerConfig
with open(sys.argv[1]) as f:
    refs, hyps = json.load(f)
scorer = Scorer(ScorerConfig(nsw=False, bootstrap=0))
before = set(sys.modules)
t = time.process_time()
out = scorer.utterances(refs, hyps)
cold = time.process_time() - t
new = sorted(set(sys.modules) - before)
t = time.process_time()
scorer.utterances(refs, hyps)
warm = time.process_time() - t
counts = [(x.counts.sub, x.counts.ins, x.counts.dele) for x in out]
print(json.dumps({"cold": cold, "warm": warm, "imported": new, "counts": counts}))
"""


def _long_pair(words: int, path: Path) -> None:
    """`scoring_scale.long_pair`'s texts into a JSON file (the children import no benchmark)."""
    spec = importlib.util.spec_from_file_location("scale", ROOT / "benchmarks" / "scoring_scale.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    path.write_text(json.dumps(module.long_pair(words)))


def one(checkout: Path, pair: Path) -> dict:
    env = {
        k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPATH")
    }
    env["OPENBLAS_NUM_THREADS"] = "1"
    out = subprocess.run(
        [sys.executable, "-c", CHILD, str(pair)],
        cwd=checkout,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout.splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--before", type=Path, required=True, help="the other checkout")
    parser.add_argument("--words", default="10000,30000,100000")
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    sides = {"before": args.before.resolve(), "after": ROOT}
    for words in (int(x) for x in args.words.split(",") if x):
        runs: dict[str, list[dict]] = {name: [] for name in sides}
        with tempfile.TemporaryDirectory() as tmp:
            pair = Path(tmp) / "pair.json"
            _long_pair(words, pair)
            for path in sides.values():  # warm the bytecode caches once
                one(path, pair)
            for _ in range(args.repeats):
                for name, path in sides.items():
                    runs[name].append(one(path, pair))
        first = {name: rs[0] for name, rs in runs.items()}
        assert first["before"]["counts"] == first["after"]["counts"], words
        row = {"words": words, "counts": first["after"]["counts"]}
        for name, rs in runs.items():
            row[name] = {
                "cold_cpu_s": round(min(r["cold"] for r in rs), 4),
                "warm_cpu_s": round(min(r["warm"] for r in rs), 4),
                "imported": [m for m in first[name]["imported"] if "." not in m or m == "numpy.ma"],
            }
        print(json.dumps(row))


if __name__ == "__main__":
    main()
