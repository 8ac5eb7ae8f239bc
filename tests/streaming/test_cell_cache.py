"""A streamed cell is a cell: cached as it goes, resumed after `kill -9`, served from the cache.

`ops/stream` keeps each utterance in its cache entry as soon as its final arrives
(asrbench/streaming/cache.py). The stand-in program (fake_program.GATED) holds the third
utterance on a named pipe: the test waits on that state (its open of the pipe returns), kills
`ops/stream` with SIGKILL, and reruns it: only the three utterances not done are streamed. A
third run streams nothing: the program is not even started.
"""

from __future__ import annotations

import json
import os
import signal
import threading
from pathlib import Path

import pytest

from asrbench.results.records import read_stream
from asrbench.settings import REPO_ROOT
from asrbench.streaming.cache import StreamCache
from asrbench.streaming.run import StreamSpec, cache_runtime
from tests.conftest import communicate_or_explain, start_job
from tests.streaming.fake_program import GATED, HEAD, stand_in

WAIT_S = 300.0  # the longest wait for the stand-in to reach the gate (it builds a virtualenv)


def _hold_open(gate: Path, job) -> int:
    """Open the gate for writing: returns once the program is held at it (its open for
    reading pairs with ours); fails with the job's output if that never happens."""
    box: dict[str, int] = {}
    opener = threading.Thread(
        target=lambda: box.setdefault("fd", os.open(gate, os.O_WRONLY)), daemon=True
    )
    opener.start()
    opener.join(WAIT_S)
    if "fd" not in box:
        os.close(os.open(gate, os.O_RDONLY | os.O_NONBLOCK))  # lets our open return
        job.kill()
        out, err = job.communicate()
        pytest.fail(f"the stand-in never reached its gate:\n{out}\n{err}")
    return box["fd"]


def _answered(log: Path) -> list[str]:
    return [line.split(" ", 1)[1] for line in log.read_text().splitlines() if line != "start"]


def test_a_killed_stream_resumes_and_a_whole_cell_is_served_from_the_cache(cli, tmp_path):
    log, gate = tmp_path / "program.log", tmp_path / "gate"
    os.mkfifo(gate)
    folder = stand_in(
        tmp_path, "gated", HEAD + GATED.format(log=str(log), gate=str(gate), block_at=2)
    )
    cache, results = tmp_path / "cache", tmp_path / "results"
    args = [
        "-m", folder, "-d", "mini_en", "--runner", "local", "--speed", "20", "--max-utts", "5",
        "--results", results, "--cache", cache,
    ]  # fmt: skip
    job = start_job([str(REPO_ROOT / "ops" / "stream"), *map(str, args)])
    fd = _hold_open(gate, job)
    os.kill(job.pid, signal.SIGKILL)  # ops/stream alone, as a crash would: its program lives on
    communicate_or_explain(job, 60)
    os.close(fd)  # the program reads its stdin's end: its parent is gone
    first = _answered(log)
    assert len(first) == 2
    assert not list(results.glob("streaming/gated/*/stream.json"))  # no cell was written
    assert len(list(cache.glob("*/utts/*.json"))) == 2  # ... but its first two are kept

    gate.unlink()
    code, out, err = cli("stream", *args)
    assert code == 0, (out, err)
    assert "2 of 5 utterance(s) from the cache" in err and "streaming 3" in err
    assert "fed by 2 runs of the program (2, 3 utterances" in out
    second = _answered(log)[2:]
    assert len(second) == 3 and not set(second) & set(first)  # only those not done
    (cell,) = (results / "streaming" / "gated").iterdir()  # the killed run's stage is gone
    rec = read_stream(cell / "stream.json")
    assert [r["id"] for r in rec.utterances] and rec.n_utts == 5 and rec.n_failed == 0
    runs = [r["run"] for r in rec.runs or []]
    assert len(runs) == 2 and [r["n_utts"] for r in rec.runs or []] == [2, 3]
    by_run = {r["id"]: r["run"] for r in rec.utterances}
    assert {by_run[u] for u in first} == {runs[0]} and {by_run[u] for u in second} == {runs[1]}
    # each run judged on its own host measures; the killed one kept what its start saw
    assert set(rec.latency_guard["measured"]) == set(runs)
    summary = json.loads((cell / "summary.json").read_text())

    starts = log.read_text().count("start")
    code, out, err = cli("stream", *args)
    assert code == 0, (out, err)
    assert "5 of 5 utterance(s) from the cache" in err and "streaming 0" in err
    assert log.read_text().count("start") == starts  # no program started
    again = json.loads((cell / "summary.json").read_text())
    assert again["metrics"] == summary["metrics"] and again["result_key"] == summary["result_key"]
    assert [r["run"] for r in read_stream(cell / "stream.json").runs or []] == runs


def test_the_cache_key_names_the_feed_and_the_container_limits(tmp_path):
    """What changes a stream cell's measures moves its key: chunk, speed, CPU limit, GPUs."""
    from asrbench.runners.base import RunOptions

    def key(spec: StreamSpec, opts: RunOptions) -> str:
        return StreamCache(tmp_path, "image", "data", cache_runtime(spec, opts)).key

    base = key(StreamSpec(), RunOptions())
    assert key(StreamSpec(), RunOptions()) == base
    assert key(StreamSpec(chunk_ms=200), RunOptions()) != base
    assert key(StreamSpec(speed=2.0), RunOptions()) != base
    assert key(StreamSpec(), RunOptions(cpus=2.0)) != base
    assert key(StreamSpec(), RunOptions(gpus="all")) != base
    assert key(StreamSpec(max_utts=3, seed=1), RunOptions()) == base  # a sample shares it


def test_run_ids_sort_in_order_of_start(tmp_path):
    """A cell lists its runs sorted by ID as their order of start: two runs begun within one
    second (a killed run and its resumption) must still sort so."""
    entry = StreamCache(tmp_path, "image", "data", {})
    ids = [entry.new_run() for _ in range(50)]
    assert sorted(ids) == ids and len(set(ids)) == len(ids)
