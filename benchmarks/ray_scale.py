#!/usr/bin/env python3
"""Ray scale-out: the same matrix on the local executor, Ray with 1 and with 2 worker nodes.

One run, side by side on this machine (a real SeaweedFS zoo, a real `ray start` cluster of a
0-CPU head and 1-CPU worker nodes, each with its own cache):

  matrix   pocketsphinx_en (Docker) x two halves of mini_en (17 + 18 utterances, 202.6 s),
           --jobs 2 per cell: 4 shards of ~9 utterances
  configs  local executor (2 shards at a time on this machine's 2 cores),
           Ray with 1 worker node (1 shard at a time), Ray with 2 worker nodes (2 at a time)
  each     once cold for Ray (publish the image and datasets to the zoo, nodes fetch them),
           then `--reps` warm runs (fresh hypothesis caches: every shard runs again), the
           configurations interleaved so that load changes hit all of them alike

Overheads, measured separately on the 2-node cluster, warm:
  per task    round trip of a no-op Ray task (submit -> result), median of 50, and the
              throughput of 200 no-op tasks submitted at once
  per shard   a 1-shard cell (`--shard-utts` utterances) on Ray minus the same cell on the
              local executor, median over `--reps` alternated pairs: everything Ray adds to a
              shard (scheduling, the node's checks, result transfer, the driver's writes)

Break-even: Ray sends a shard to another machine; that gains the shard's compute time and
costs the per-shard overhead, so shards shorter than overhead / (seconds per utterance)
utterances cost more than they gain.

    .venv/bin/python benchmarks/ray_scale.py [--reps 3] [--shard-utts 2] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from asrbench.settings import REPO_ROOT

MODEL = "pocketsphinx_en"
ACCESS, SECRET = "BENCHACCESSKEY", "bench-secret-key-0123456789"


def _halves(root: Path) -> list[Path]:
    """mini_en split in two datasets (dataset order), so the matrix has two distinct cells."""
    from asrbench.dataset import load_dataset, write_dataset

    src = load_dataset(REPO_ROOT / "datasets" / "mini_en")
    cut = len(src.utterances) // 2
    out = []
    for name, utts in (("mini_a", src.utterances[:cut]), ("mini_b", src.utterances[cut:])):
        folder = root / name
        (folder / "audio").mkdir(parents=True)
        for u in utts:
            shutil.copy2(src.root / u.audio, folder / u.audio)
        write_dataset(folder, {**src.meta, "id": name}, src.columns, utts)
        out.append(folder)
    return out


def _run(cells, executor, work: Path, jobs: int, max_utts: int | None = None) -> dict:
    """One matrix run on fresh hypothesis caches and results; wall, utterances, shards."""
    from asrbench.benchmark.run import JobSpec, run_matrix

    shutil.rmtree(work, ignore_errors=True)
    t0 = time.perf_counter()
    spec = JobSpec(
        runner="docker",
        jobs=jobs,
        max_utts=max_utts,
        results_root=work / "results",
        cache_root=work / "cache",
        scorer_options={"nsw": False},
        progress=False,
        command=("ray_scale",),
    )
    out = run_matrix(cells, spec, executor=executor)
    wall = time.perf_counter() - t0
    print(
        f"[{time.strftime('%H:%M:%S')}] {work.name}: {wall:.1f} s, load {os.getloadavg()}",
        file=sys.stderr,
        flush=True,
    )
    bad = [o for o in out if isinstance(o, Exception)]
    if bad:
        raise SystemExit(f"a cell failed: {bad[0]}")
    shards = []
    for cell in out:
        shards += json.loads((cell.out_dir / "run.json").read_text())["shards"]
    utts = sum(c.summary.selection.n_utts for c in out)
    audio = sum((c.summary.timing or {}).get("audio_s") or 0 for c in out)
    proc = sum((c.summary.timing or {}).get("processing_s") or 0 for c in out)
    return {"wall_s": wall, "utts": utts, "audio_s": audio, "processing_s": proc, "shards": shards}


def _noop_overhead(address: str) -> dict:
    import ray

    ray.init(address=address, logging_level="ERROR", log_to_driver=False)
    try:

        @ray.remote(num_cpus=1)
        def noop(x: int) -> int:
            return x

        ray.get([noop.remote(i) for i in range(20)])  # warm the worker processes
        rtt = []
        for i in range(50):
            t = time.perf_counter()
            ray.get(noop.remote(i))
            rtt.append(time.perf_counter() - t)
        t = time.perf_counter()
        ray.get([noop.remote(i) for i in range(200)])
        burst = time.perf_counter() - t
    finally:
        ray.shutdown()
    return {
        "task_rtt_ms_median": 1000 * statistics.median(rtt),
        "task_rtt_ms_p90": 1000 * sorted(rtt)[int(0.9 * len(rtt))],
        "tasks_per_s_burst_200": 200 / burst,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--shard-utts", type=int, default=2)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()

    from asrbench.executors import LocalExecutor, get_executor
    from asrbench.testing.raylocal import run_local_cluster
    from asrbench.testing.seaweed import run_seaweedfs

    tmp = Path(tempfile.mkdtemp(prefix="ray-scale-"))
    creds = {
        "AWS_ACCESS_KEY_ID": ACCESS,
        "AWS_SECRET_ACCESS_KEY": SECRET,
        "AWS_EC2_METADATA_DISABLED": "true",
        "AWS_CONFIG_FILE": str(tmp / "none"),
        "AWS_SHARED_CREDENTIALS_FILE": str(tmp / "none"),
    }
    os.environ.update(creds)
    os.environ["ASRBENCH_CACHE"] = str(tmp / "driver-cache")  # publish records, this run only
    datasets = _halves(tmp / "datasets")
    model = REPO_ROOT / "models" / MODEL
    cells = [(str(model), str(d)) for d in datasets]
    results: dict = {
        "load_before": os.getloadavg(),
        "matrix": {"model": MODEL, "datasets": ["mini_a (17 utts)", "mini_b (18 utts)"], "jobs": 2},
    }
    try:
        with run_seaweedfs(tmp / "weed", ACCESS, SECRET, "zoo") as weed:
            zoo = tmp / "zoo.yaml"
            zoo.write_text(
                json.dumps(
                    {
                        "default_remote": "s3",
                        "remotes": {"s3": {"url": "s3://zoo/bench", "endpoint_url": weed.endpoint}},
                    }
                )
            )
            os.environ["ASRBENCH_ZOO_CONFIG"] = str(zoo)
            env = {**creds, "PYTHONPATH": str(REPO_ROOT)}
            with run_local_cluster(
                tmp / "cluster", [{"name": "w1", "resources": {"docker": 1}}], env=env
            ) as cluster:
                # warm the local path first (image built, virtualenvs made) and the timings
                _run(cells, LocalExecutor(), tmp / "w-local", 2)

                def ray_run(tag: str) -> dict:
                    with get_executor("ray", address=cluster.address, progress=False) as ex:
                        return _run(cells, ex, tmp / f"w-{tag}", 2)

                runs: dict[str, list] = {"local": [], "ray_1_node": [], "ray_2_nodes": []}
                results["runs"] = runs  # filled in place: kept if a later step fails
                results["ray_1_node_cold"] = ray_run("cold1")
                for _ in range(args.reps):
                    runs["local"].append(_run(cells, LocalExecutor(), tmp / "w-local", 2))
                    runs["ray_1_node"].append(ray_run("r1"))
                cluster.add_node("w2", resources={"docker": 1})
                results["ray_2_nodes_cold"] = ray_run("cold2")  # w2 fetches its copies
                for _ in range(args.reps):
                    runs["ray_2_nodes"].append(ray_run("r2"))
                    runs["local"].append(_run(cells, LocalExecutor(), tmp / "w-local", 2))
                results["noop"] = _noop_overhead(cluster.address)
                # per-shard overhead: a 1-shard cell, Ray vs local, alternated
                one = [(str(model), str(datasets[0]))]
                pairs: list = []
                results["shard_pairs"] = pairs
                for _ in range(args.reps):
                    loc = _run(one, LocalExecutor(), tmp / "s-local", 1, args.shard_utts)
                    with get_executor("ray", address=cluster.address, progress=False) as ex:
                        ray_ = _run(one, ex, tmp / "s-ray", 1, args.shard_utts)
                    pairs.append((loc, ray_))
    finally:
        results["load_after"] = os.getloadavg()
        shutil.rmtree(tmp, ignore_errors=True)
        if args.json:  # also on failure: what was measured so far is kept
            args.json.write_text(json.dumps(results, indent=1, default=str))
    report(results, args)


def _med(xs: list[float]) -> float:
    return statistics.median(xs) if xs else float("nan")


def report(r: dict, args: argparse.Namespace) -> None:
    rows = []
    for name, cold in (
        ("local executor", None),
        ("Ray, 1 worker node", "ray_1_node_cold"),
        ("Ray, 2 worker nodes", "ray_2_nodes_cold"),
    ):
        key = {
            "local executor": "local",
            "Ray, 1 worker node": "ray_1_node",
            "Ray, 2 worker nodes": "ray_2_nodes",
        }[name]
        warm = r["runs"][key]
        wall = _med([x["wall_s"] for x in warm])
        utts = warm[0]["utts"]
        rows.append(
            (
                name,
                wall,
                utts / wall,
                warm[0]["audio_s"] / wall,
                r[cold]["wall_s"] if cold else None,
            )
        )
    print(
        f"matrix: {r['matrix']}; load average before {r['load_before']}, after {r['load_after']}\n"
    )
    print("| configuration | warm wall s (median) | utts/s | audio-s/s | cold wall s |")
    print("|---|---|---|---|---|")
    for name, wall, ups, aps, cold in rows:
        print(f"| {name} | {wall:.2f} | {ups:.2f} | {aps:.2f} | {f'{cold:.2f}' if cold else '-'} |")
    noop = r["noop"]
    loc = [p[0]["wall_s"] for p in r["shard_pairs"]]
    ray_ = [p[1]["wall_s"] for p in r["shard_pairs"]]
    diffs = [b - a for a, b in zip(loc, ray_, strict=True)]
    per_shard = _med(diffs)
    # seconds of model processing per utterance (pocketsphinx, from its timing.tsv)
    warm = r["runs"]["local"]
    per_utt = _med([x["processing_s"] / x["utts"] for x in warm])
    node_parts = [s.get("node", {}) for x in r["runs"]["ray_2_nodes"] for s in x["shards"]]
    latency_minus_run = [n["latency_s"] - n["run_s"] for n in node_parts if n]
    fetch = [n["fetch_s"] for n in node_parts if n]
    print(
        f"\nRay overhead per task (no-op, warm workers): {noop['task_rtt_ms_median']:.1f} ms "
        f"median, {noop['task_rtt_ms_p90']:.1f} ms p90; {noop['tasks_per_s_burst_200']:.0f} "
        "tasks/s for 200 submitted at once"
    )
    print(
        f"Ray overhead per shard (1-shard cell of {args.shard_utts} utts, Ray - local, "
        f"median of {len(diffs)}): {1000 * per_shard:.0f} ms (local {_med(loc):.2f} s, Ray "
        f"{_med(ray_):.2f} s; differences {[round(d, 3) for d in diffs]})"
    )
    print(
        f"  of which on the node before the program (warm fetch check, identity): "
        f"{1000 * _med(fetch):.0f} ms median; submit-to-result minus program wall in the "
        f"2-node runs (includes queueing): {1000 * _med(latency_minus_run):.0f} ms median"
    )
    print(
        f"model processing per utterance: {per_utt:.3f} s -> break-even shard size "
        f"{per_shard / per_utt:.1f} utterances: shorter shards cost more on Ray than a "
        "second machine gains"
    )


if __name__ == "__main__":
    main()
