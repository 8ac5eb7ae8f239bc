"""PocketSphinx on mini_en through Docker: --jobs 2 equals --jobs 1, cache hit, SIGKILL resume.

Uses an 8-utterance seeded sample to stay within a few minutes on 2 cores.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from asrbench.images import engine_available
from asrbench.settings import REPO_ROOT
from tests.conftest import hyp_lines_written, require

N = "8"
COMMON = ["-d", "mini_en", "--runner", "docker", "--max-utts", N, "--seed", "0", "--no-progress"]


def _bench(model: Path, cache: Path, results: Path, jobs: int) -> subprocess.CompletedProcess:
    cmd = [
        str(REPO_ROOT / "ops" / "benchmark"),
        "-m",
        str(model),
        *COMMON,
        "--jobs",
        str(jobs),
        "--cache",
        str(cache),
        "--results",
        str(results),
    ]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    assert p.returncode == 0, f"{cmd}\nstdout:{p.stdout}\nstderr:{p.stderr[-3000:]}"
    return p


def _cell(results: Path) -> Path:
    """The stored sample (--max-utts 8): a sample never lands in the reported cell."""
    (cell,) = (results / "pocketsphinx_en").glob("mini_en~sample-*")
    return cell


def _without_timing(path: Path) -> dict:
    s = json.loads(path.read_text())
    s.pop("timing")
    return s


def _containers_created(
    image: str, since: float, until: float | None = None, under: Path | None = None
) -> int:
    """Containers of `image` created in the window; with `under`, only those whose work dir
    (the runner's org.asrbench.work label) lies below it, so other jobs' containers on the
    same engine don't count."""
    from asrbench.images import client

    until = until if until is not None else time.time()
    events = client().events(
        since=int(since),
        until=int(until) + 1,
        decode=True,
        filters={"type": "container", "event": "create", "image": image},
    )
    prefix = str(under.resolve()) if under else ""
    return sum(
        1
        for e in events
        if e.get("Actor", {}).get("Attributes", {}).get("org.asrbench.work", "").startswith(prefix)
    )


@pytest.fixture(scope="module")
def reference(stateless_pocketsphinx: Path, tmp_path_factory: pytest.TempPathFactory) -> dict:
    """An uninterrupted --jobs 1 run: the result every other run must reproduce."""
    require("docker", engine_available(), "no Docker Engine answers")
    root = tmp_path_factory.mktemp("ref")
    _bench(stateless_pocketsphinx, root / "cache", root / "results", 1)
    return {"cell": _cell(root / "results"), "cache": root / "cache"}


def test_jobs2_equals_jobs1_then_cache_hit_starts_no_container(
    reference: dict, stateless_pocketsphinx: Path, tmp_path: Path
) -> None:
    t0 = time.time()
    _bench(stateless_pocketsphinx, tmp_path / "cache", tmp_path / "r2", 2)
    ref, two = reference["cell"], _cell(tmp_path / "r2")
    run2 = json.loads((two / "run.json").read_text())
    assert len(run2["shards"]) == 2 and all(s["error"] is None for s in run2["shards"])
    assert sum(s["n_utts"] for s in run2["shards"]) == int(N)
    for name in ("hyp.raw.tsv", "utterances.jsonl", "hyp.norm.tsv", "ref.norm.tsv", "failed.tsv"):
        assert (two / name).read_bytes() == (ref / name).read_bytes(), name
    assert _without_timing(two / "summary.json") == _without_timing(ref / "summary.json")
    assert (two / "hyp.raw.tsv").read_text().count("\n") == int(N)

    image = run2["model"]["image"]
    since = time.time()
    # the event query does see our shards: a positive control for the zero below
    assert _containers_created(image, t0, since, tmp_path) == 2
    time.sleep(1.5)  # event times are whole seconds: keep the two windows apart
    since = time.time()
    p = _bench(stateless_pocketsphinx, tmp_path / "cache", tmp_path / "r3", 2)
    assert "cache hit" in p.stdout
    assert _containers_created(image, since, under=tmp_path) == 0
    run3 = json.loads((_cell(tmp_path / "r3") / "run.json").read_text())
    assert run3["cache"]["hit"] and run3["cache"]["utts_run"] == 0 and run3["shards"] == []
    # same command, same inputs: summary.json identical byte for byte (timings come from the
    # cached per-utterance timing, so here even the timing section matches)
    assert (_cell(tmp_path / "r3") / "summary.json").read_bytes() == (
        two / "summary.json"
    ).read_bytes()


def test_sigkill_half_way_resumes_to_the_uninterrupted_result(
    reference: dict, stateless_pocketsphinx: Path, tmp_path: Path
) -> None:
    cache, results = tmp_path / "cache", tmp_path / "r"
    cmd = [
        str(REPO_ROOT / "ops" / "benchmark"),
        "-m",
        str(stateless_pocketsphinx),
        *COMMON,
        "--jobs",
        "2",
        "--cache",
        str(cache),
        "--results",
        str(results),
    ]
    proc = subprocess.Popen(
        cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True
    )
    deadline = time.monotonic() + 600
    done = 0
    while time.monotonic() < deadline and proc.poll() is None:
        done = hyp_lines_written(cache)
        if done >= 1:  # kill as early as possible: the job must not finish first
            break
        time.sleep(0.2)
    assert proc.poll() is None, f"finished before it could be killed: {proc.communicate()}"
    assert done >= 1, "no progress within the deadline"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert not (results / "pocketsphinx_en").exists()  # killed before writing any result
    assert done < int(N)

    p = _bench(stateless_pocketsphinx, cache, results, 2)
    assert "resumed:" in p.stderr
    cell = _cell(results)
    run = json.loads((cell / "run.json").read_text())
    assert 0 < run["cache"]["utts_run"] <= int(N) - 1
    for name in ("hyp.raw.tsv", "utterances.jsonl", "failed.tsv"):
        assert (cell / name).read_bytes() == (reference["cell"] / name).read_bytes(), name
    assert _without_timing(cell / "summary.json") == _without_timing(
        reference["cell"] / "summary.json"
    )
    # no leftover attempt folders or containers
    assert not list(cache.glob("*/attempts/*"))
