"""2 real models x 2 datasets on a real Ray cluster, against the local executor.

PocketSphinx and Whisper tiny in Docker, on two tiny datasets of mini_en utterances:
- the Ray run's cells equal the local run's byte for byte (per-utterance JSONL, hypotheses,
  alignments; summary.json but for the measured `timing`), while the driver runs in a mount
  namespace of its own where the datasets, the model folders and the results exist only for it:
  the nodes cannot have read them, they got everything from the zoo;
- Docker shards land only on nodes started with the `docker` resource;
- a worker node killed (by its pid) while it runs a shard: its task is retried elsewhere and the
  result is again the local one, each shard counted once.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from asrbench.images import engine_available
from asrbench.settings import REPO_ROOT
from tests.conftest import require
from tests.ray.support import (
    OPS,
    assert_same_cells,
    bench,
    clean_env,
    make_tiny_datasets,
    shards,
)

pytestmark = [pytest.mark.ray, pytest.mark.s3, pytest.mark.docker, pytest.mark.slow]

MODELS = ("pocketsphinx_en", "whisper_tiny_en")
JOBS = "2"


def _can_unshare() -> bool:
    try:
        return (
            subprocess.run(
                ["unshare", "-m", "--propagation", "private", "true"],
                capture_output=True,
                timeout=30,
            ).returncode
            == 0
        )
    except (OSError, subprocess.TimeoutExpired):
        return False


@pytest.fixture(scope="module")
def stage(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Driver material: two tiny datasets and the two model folders (with their helpers)."""
    require("docker", engine_available(), "no Docker Engine answers")
    root = tmp_path_factory.mktemp("stage")
    make_tiny_datasets(root / "datasets")
    for name in (*MODELS, "_common"):
        shutil.copytree(
            REPO_ROOT / "models" / name,
            root / "models" / name,
            ignore=shutil.ignore_patterns("__pycache__"),
        )
    return root


def _matrix(base: Path) -> list[str]:
    args: list[str] = []
    for m in MODELS:
        args += ["-m", str(base / "models" / m)]
    for d in ("tiny_a", "tiny_b"):
        args += ["-d", str(base / "datasets" / d)]
    return [*args, "--runner", "docker", "--jobs", JOBS]


@pytest.fixture(scope="module")
def reference(stage: Path, zoo, driver_cache: Path, tmp_path_factory) -> Path:
    """The local executor's results for the matrix: what every Ray run must reproduce."""
    out = tmp_path_factory.mktemp("reference")
    env = {**clean_env(), "ASRBENCH_CACHE": str(driver_cache)}
    p = bench(
        *_matrix(stage),
        "--results",
        out / "results",
        "--cache",
        out / "cache",
        "--no-progress",
        env=env,
    )
    assert p.returncode == 0, p.stderr[-3000:]
    assert "4 of 4 cells done" in p.stdout
    return out / "results"


# `full` (35 s): the 4-cell real-model matrix; `make test` keeps the worker killed mid-run on
# the same real models and cluster.
@pytest.mark.full
def test_ray_matrix_equals_local_and_nodes_never_read_driver_paths(
    cluster, stage: Path, reference: Path, driver_env: dict, tmp_path: Path
) -> None:
    require("unshare", _can_unshare(), "`unshare -m` needs root (CAP_SYS_ADMIN)")
    private, out = tmp_path / "driver-only", tmp_path / "out"
    private.mkdir()
    out.mkdir()
    # The driver's own mount namespace: a tmpfs at `private` that only the driver sees, holding
    # the datasets, the model folders, its results and its hypothesis cache.
    script = (
        'P=$1; S=$2; O=$3; shift 3; mount -t tmpfs tmpfs "$P" && cp -a "$S"/. "$P"/ || '
        'exit 99; "$@"; rc=$?; cp -a "$P"/results "$O"/; exit $rc'
    )
    wrapper = [
        "unshare",
        "-m",
        "--propagation",
        "private",
        "sh",
        "-c",
        script,
        "sh",
        str(private),
        str(stage),
        str(out),
    ]
    p = bench(
        *_matrix(private),
        "--executor",
        "ray",
        "--address",
        cluster.address,
        "--results",
        private / "results",
        "--cache",
        private / "cache",
        env=driver_env,
        prefix=wrapper,
    )
    assert p.returncode == 0, p.stderr[-4000:]
    assert "4 of 4 cells done" in p.stdout
    assert not any(private.iterdir())  # outside the driver's namespace the folder is empty
    assert_same_cells(out / "results", reference, with_timing=False)

    # one progress line for the cluster, and a line per node
    assert f"ray: {4 * int(JOBS)}/{4 * int(JOBS)} shards, 12/12 utts (100%)" in p.stderr
    assert "ray:   node " in p.stderr
    nodes = {n.name: n for n in cluster.nodes}
    ran = shards(out / "results")
    assert len(ran) == 4 * int(JOBS) and all(s["error"] is None for s in ran)
    used = {s["node"]["cache"] for s in ran}
    # Docker shards only where `docker` is offered (a, b), never on c; both were used
    assert used == {str(nodes["a"].cache), str(nodes["b"].cache)}, used
    # each node fetched the datasets of the shards it ran from the zoo into its own cache
    # (which node runs which shard is Ray's choice: a node may never see one of the datasets)
    by_cache = {str(n.cache): n for n in cluster.nodes}
    for s in ran:
        node, dataset = by_cache[s["node"]["cache"]], s["cell"].split("/")[1]
        got = {p.name for p in (node.cache / "executor" / "datasets").glob("*/*")}
        assert dataset in {"tiny_a", "tiny_b"} and dataset in got, (node.name, s["cell"], got)
    run = json.loads((next(iter((out / "results").glob("*/*/run.json")))).read_text())
    assert run["executor"]["name"] == "ray" and run["executor"]["zoo_remote"] == "s3"


def test_worker_node_killed_mid_run_same_result_nothing_twice(
    cluster, stage: Path, reference: Path, driver_env: dict, tmp_path: Path
) -> None:
    from asrbench.runners.leftovers import kill_leftovers

    # Node d holds each shard it starts until killed: the kill below cannot race a shard
    # that finishes first (a 1.4 s shard did once, while the machine starved this loop).
    gate = tmp_path / "hold-d"
    gate.touch()
    victim = cluster.add_node("d", resources={"docker": 1}, env={"ASRBENCH_SHARD_HOLD": str(gate)})
    cmd = [
        str(OPS / "benchmark"),
        *_matrix(stage),
        "--executor",
        "ray",
        "--address",
        cluster.address,
        "--results",
        str(tmp_path / "r"),
        "--cache",
        str(tmp_path / "c"),
        "--no-progress",
    ]
    proc = subprocess.Popen(
        cmd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=driver_env,
        cwd=REPO_ROOT,
    )
    try:
        deadline = time.monotonic() + 600
        while time.monotonic() < deadline and proc.poll() is None:
            if list(victim.cache.glob("executor/work/*/*/shard-*/.owner")):
                break  # node d runs a shard right now, held until it dies
            time.sleep(0.1)
        assert proc.poll() is None, f"finished before node d got a shard: {proc.communicate()}"
        victim.kill()  # the whole node: its `ray start` process group, by its pid
        out, err = proc.communicate(timeout=900)
        assert proc.returncode == 0, err[-4000:]
        assert "4 of 4 cells done" in out
        assert_same_cells(tmp_path / "r", reference, with_timing=False)
        ran = shards(tmp_path / "r")
        # every shard reported once, none by the dead node (its result never arrived)
        keys = [(s["cell"], s["round"], s["shard"]) for s in ran]
        assert len(keys) == len(set(keys)) == 4 * int(JOBS)
        assert str(victim.cache) not in {s["node"]["cache"] for s in ran}
    finally:
        if proc.poll() is None:
            proc.kill()
        kill_leftovers(victim.cache)  # its container outlived it (dockerd owns containers)
        cluster.remove_node(victim)  # killed already; waits until it is marked dead
