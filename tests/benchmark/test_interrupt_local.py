"""Ctrl-C of a real `ops/benchmark` (local runner): programs stop, a rerun resumes.

Deterministic: the model program (a gated fake) transcribes one utterance per shard and then
blocks until the test opens its gate, so the job cannot finish before the signal arrives.
"""

from __future__ import annotations

import json
import signal
import subprocess
import time
from pathlib import Path

import psutil

from asrbench.settings import REPO_ROOT
from tests.conftest import (
    communicate_or_explain,
    hyp_lines_written,
    start_job,
)


def _running_under(folder: Path) -> list[int]:
    prefix = str(folder.resolve())
    return [
        p.pid
        for p in psutil.process_iter(["cmdline"])
        if any(prefix in a for a in (p.info["cmdline"] or []))
    ]


def test_ctrl_c_stops_shards_and_rerun_resumes(fake_models, tmp_path: Path) -> None:
    gate = tmp_path / "gate-open"
    model = fake_models("fake_gated", mode="gate", marker=gate)
    cache, results = tmp_path / "cache", tmp_path / "r"
    cmd = [
        str(REPO_ROOT / "ops" / "benchmark"),
        "-m",
        str(model),
        "-d",
        "mini_en",
        "--runner",
        "local",
        "--jobs",
        "2",
        "--max-utts",
        "6",
        "--cache",
        str(cache),
        "--results",
        str(results),
        "--no-progress",
        "--score-opt",
        "nsw=false",
    ]
    proc = start_job(cmd)
    deadline = time.monotonic() + 300
    done = 0
    while time.monotonic() < deadline and proc.poll() is None and done < 2:
        done = hyp_lines_written(cache)
        time.sleep(0.1)
    assert done == 2 and proc.poll() is None, proc.communicate()  # one per shard, both blocked
    proc.send_signal(signal.SIGINT)
    out, err = communicate_or_explain(proc, 120)
    assert proc.returncode == 130, err
    assert "rerun the same command to continue" in err
    assert _running_under(cache) == []  # no model program outlives the job
    gate.write_text("open")
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr
    assert "resumed: 2 utterance(s) recovered" in p.stderr
    (cell,) = (results / "fake_gated").glob("mini_en~sample-*")
    run = json.loads((cell / "run.json").read_text())
    assert run["cache"]["utts_run"] == 4
    assert (cell / "hyp.raw.tsv").read_text().count("\n") == 6


def test_a_job_that_does_not_exit_is_explained(fake_models, tmp_path: Path) -> None:
    """The diagnosis the Ctrl-C tests fail with: a job blocked on its model program prints its
    threads' stacks on SIGUSR1, and the failure lists the processes it started."""
    import pytest

    gate = tmp_path / "never-opened"
    model = fake_models("fake_gated", mode="gate", marker=gate)
    cache = tmp_path / "cache"
    proc = start_job(
        [
            str(REPO_ROOT / "ops" / "benchmark"),
            *("-m", str(model), "-d", "mini_en", "--runner", "local", "--max-utts", "2"),
            *("--cache", str(cache), "--results", str(tmp_path / "r"), "--no-progress"),
        ]
    )
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and proc.poll() is None:
        if hyp_lines_written(cache):
            break  # one utterance written, the program now waits on the gate
        time.sleep(0.1)
    assert proc.poll() is None, proc.communicate()
    with pytest.raises(pytest.fail.Exception) as failed:
        communicate_or_explain(proc, 1)
    why = str(failed.value)
    assert "did not exit within 1 s" in why
    assert "fake.py" in why and "watchdog.py" in why  # the program under its watchdog
    assert "Thread 0x" in why and "run_shards" in why  # faulthandler's stacks, every thread
    assert proc.returncode is not None
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and _running_under(cache):
        time.sleep(0.1)  # the watchdog takes the program down once its job is gone
    assert _running_under(cache) == []
